#!/usr/bin/env bash
# Refreshes the CA bundle of the images' base layer
# (internal/imagebuild/base/ca-certificates.crt) from Debian's
# ca-certificates package: every certificate it ships under
# /usr/share/ca-certificates/mozilla, in byte order, each ending in a newline,
# as update-ca-certificates concatenates them. The bundle is committed so
# that every machine builds the same image digest; run this when Debian
# publishes a new ca-certificates and commit both files.
set -euo pipefail
cd "$(dirname "$0")/.."
out=internal/imagebuild/base
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download ca-certificates >/dev/null)
deb=$(ls "$work"/ca-certificates_*.deb)
dpkg-deb -x "$deb" "$work/root"
version=$(dpkg-deb -f "$deb" Version)
: > "$out/ca-certificates.crt"
while IFS= read -r crt; do
  sed -e '$a\' "$crt" >> "$out/ca-certificates.crt"
done < <(find "$work/root/usr/share/ca-certificates/mozilla" -type f -name '*.crt' | LC_ALL=C sort)
echo "$version" > "$out/ca-certificates.version"
echo "CA bundle from ca-certificates $version: $(grep -c 'BEGIN CERTIFICATE' "$out/ca-certificates.crt") certificates"
