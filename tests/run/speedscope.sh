#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Feed a perf script text (pfmon --report FILE --profile-format
# perf-script) to speedscope, a profile viewer that imports `perf script`
# output, in a headless chromium, and print the page's title: speedscope
# names its page after the profile only once it has imported the file
# ("NAME - speedscope"); one it cannot read leaves "speedscope".
#
#   tests/run/speedscope.sh FILE.perf-script
#
# speedscope comes from the npm registry, checked against the integrity
# hash below and cached by it in ~/.cache/kvm-perfmon; chromium is
# Debian's (scripts/deps.sh).
set -euo pipefail

version=1.25.0
integrity=sha512-cpf9HWTZf1ijLXBJrk87Ve/54tnYx6rlf0gUThvn3ook6h63hLXVOQiMf44PT+XoV503cPfvfiT5gP5vojp6Ag==

die() { echo "speedscope.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] && [ -s "$1" ] || die "usage: speedscope.sh FILE.perf-script (a file with samples)"
command -v chromium >/dev/null || die "no chromium (scripts/deps.sh installs it)"

hash=$(printf '%s' "${integrity#sha512-}" | base64 -d | od -An -tx1 | tr -d ' \n')
cache=${XDG_CACHE_HOME:-$HOME/.cache}/kvm-perfmon/speedscope/$hash
if [ ! -f "$cache/package/dist/release/index.html" ]; then
	command -v npm >/dev/null || die "no npm to fetch speedscope $version"
	tmp=$(mktemp -d)
	(cd "$tmp" && npm pack --silent "speedscope@$version" >/dev/null) ||
		die "npm pack speedscope@$version failed"
	got=sha512-$(openssl dgst -sha512 -binary "$tmp/speedscope-$version.tgz" | base64 -w0)
	[ "$got" = "$integrity" ] || die "speedscope-$version.tgz: integrity $got, want $integrity"
	tar -xzf "$tmp/speedscope-$version.tgz" -C "$tmp"
	mkdir -p "$(dirname "$cache")"
	rm -rf "$cache"
	mv "$tmp" "$cache"
fi

site=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; rm -rf "$site"' EXIT
cp -r "$cache/package/dist/release/." "$site/"
name=$(basename "$1")
cp "$1" "$site/$name"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$site" \
	>"$site/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do
	port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$site/server.log")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || die "the HTTP server did not start: $(cat "$site/server.log")"
# the virtual time budget lets the page fetch and import before the dump
timeout 120 chromium --headless=new --no-sandbox --disable-gpu \
	--user-data-dir="$site/profile" --virtual-time-budget=30000 ${SPEEDSCOPE_CHROMIUM_FLAGS:-} \
	--dump-dom "http://127.0.0.1:$port/index.html#profileURL=/$name" \
	2>"${SPEEDSCOPE_LOG:-$site/chromium.log}" |
	sed -n 's/.*<title>\([^<]*\)<\/title>.*/\1/p' | head -n1
