/** The tabs of a workflow's page (live or archived): links that keep the selected node. */
import { href } from '../router.js';

export function ViewTabs({ tabs, path, tab, node }: { tabs: [string, string][]; path: string[]; tab: string; node?: string }) {
  return (
    <nav class="tabs" aria-label="Views">
      {tabs.map(([id, label]) => (
        <a href={href(path, { tab: id, node })} aria-current={tab === id ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}
