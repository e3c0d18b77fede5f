#!/usr/bin/env bash
# Builds a minimal Debian root filesystem holding only the named packages and the libraries they
# need — no dpkg, no apt, no shell unless a package brings one — the base layer of plugflow's
# images. Shared by `make image` (hack/image/build.sh) and the Dockerfile, so both start from the
# same files.
#
#   hack/image/base-rootfs.sh SUITE PACKAGES OUT_DIR      e.g.  trixie nodejs,ca-certificates /tmp/rootfs
#
# It writes OUT_DIR/rootfs and OUT_DIR/packages.txt (the exact .deb files, name_version_arch).
# mmdebstrap's `extract` variant unpacks the packages and their dependencies without running
# maintainer scripts, in `chrootless` mode, so it needs neither root nor a container engine.
# Reproducibility: files from the packages keep the packages' own mtimes; everything this script
# creates or changes is clamped to the newest of those, so the same .deb files give the same tree.
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

SUITE="$1" PACKAGES="$2" OUT="$3"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
ROOTFS="$OUT/rootfs"
rm -rf "$ROOTFS" && mkdir -p "$OUT"
start=$(date +%s)
sleep 1 # files written from now on are strictly newer than $start

mmdebstrap --mode=chrootless --variant=extract --include="$PACKAGES" \
  --skip=cleanup/apt/cache --aptopt='APT::Install-Recommends "false"' \
  "$SUITE" "$ROOTFS" "$MIRROR"

# The exact package files: the record of what the image holds, and the key of its reproducibility.
(cd "$ROOTFS/var/cache/apt/archives" && ls -1 ./*.deb | sed 's|^\./||; s|\.deb$||' | sort) > "$OUT/packages.txt"

# Debian since bookworm is merged-/usr: /bin, /lib, /lib64 and /sbin are links into /usr, made by
# a maintainer script that `extract` does not run. The ELF interpreter path is /lib64/ld-linux….
for d in bin lib lib64 sbin; do [[ -e "$ROOTFS/$d" || -L "$ROOTFS/$d" ]] || ln -s "usr/$d" "$ROOTFS/$d"; done

# busybox's applets as links (its maintainer script would make them); the binary is static.
if [[ -x "$ROOTFS/usr/bin/busybox" ]]; then
  for a in $("$ROOTFS/usr/bin/busybox" --list); do
    [[ -e "$ROOTFS/usr/bin/$a" || -L "$ROOTFS/usr/bin/$a" ]] || ln -s busybox "$ROOTFS/usr/bin/$a"
  done
fi

# ca-certificates' maintainer script concatenates the certificates into the bundle OpenSSL reads
# (Debian's Node.js uses the system store, so HTTP templates to https:// URLs need it).
if [[ -d "$ROOTFS/usr/share/ca-certificates/mozilla" ]]; then
  mkdir -p "$ROOTFS/etc/ssl/certs"
  find "$ROOTFS/usr/share/ca-certificates/mozilla" -name '*.crt' -print0 | LC_ALL=C sort -z \
    | xargs -0 cat > "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
fi

# Nothing at runtime reads these: documentation, manuals, translations, package-manager state,
# glibc's iconv modules, debconf (pulled in by ca-certificates, needs perl which is absent),
# Node.js' corepack and bundled type definitions, command-line tools nothing runs.
rm -rf "$ROOTFS"/usr/share/{doc,man,info,locale,lintian,bug,debconf,perl5} \
  "$ROOTFS"/usr/lib/x86_64-linux-gnu/gconv "$ROOTFS"/usr/bin/debconf* "$ROOTFS"/usr/sbin/dpkg-* \
  "$ROOTFS"/usr/share/nodejs/{corepack,@types} "$ROOTFS"/usr/bin/{corepack,acorn,openssl,c_rehash} \
  "$ROOTFS"/var/cache/* "$ROOTFS"/var/lib/apt "$ROOTFS"/var/lib/dpkg "$ROOTFS"/var/log/* \
  "$ROOTFS"/etc/apt "$ROOTFS"/dev/*
mkdir -p "$ROOTFS/tmp" && chmod 1777 "$ROOTFS/tmp"

# Clamp what was created here to the newest mtime that came from a package.
newest=$(find "$ROOTFS" ! -newermt "@$start" -printf '%T@\n' | sort -n | tail -1 | cut -d. -f1)
find "$ROOTFS" -newermt "@$start" -exec touch -h -d "@${newest:-0}" {} +
echo "rootfs of $(wc -l < "$OUT/packages.txt") packages in $ROOTFS ($(du -sh "$ROOTFS" | cut -f1))"
