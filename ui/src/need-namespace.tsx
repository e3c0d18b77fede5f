/** Shown by pages that work in one namespace when the header's namespace is "all". */
export function NeedNamespace({ what }: { what: string }) {
  return (
    <p class="empty">
      {what} live in a namespace: type one in the <strong>Namespace</strong> box at the top.
    </p>
  );
}
