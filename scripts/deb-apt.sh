# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# apt-get on a Debian suite's index of its own, for the scripts that take
# a source package or a .deb from a suite this machine does not use
# (scripts/qemu-source.sh, scripts/libpfm3.sh). The machine's own apt
# configuration is never touched: the index lives in a directory of the
# caller's (sources.list, lists, cache).
#
# The caller defines say() and die().

# a suite's index older than this is read again (a stable update)
DEB_APT_INDEX_MAX_AGE=$((24 * 3600))

# apt options that read the index in DIR only
deb_apt_opts() {
	local d=$1
	echo "-q -o Dir::Etc::sourcelist=$d/sources.list" \
		"-o Dir::Etc::sourceparts=/dev/null -o Dir::State::Lists=$d/lists" \
		"-o Dir::Cache=$d/cache -o APT::Sandbox::User=root"
}

# deb_apt DIR LINE ARGS...: apt-get on the index in DIR (LINE is its
# sources.list line), reading the index again when it is missing or older
# than a day; an index that cannot be refreshed is used as it is
deb_apt() {
	local d=$1 line=$2 opts stamp
	shift 2
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	echo "$line" >"$d/sources.list"
	read -ra opts <<<"$(deb_apt_opts "$d")"
	stamp=$d/lists/updated
	if ! [ -f "$stamp" ] ||
		[ $(($(date +%s) - $(stat -c %Y "$stamp"))) -gt $DEB_APT_INDEX_MAX_AGE ]; then
		say "reading the index of $line"
		if apt-get "${opts[@]}" update >&2; then
			touch "$stamp"
		elif ! [ -f "$stamp" ]; then
			die "cannot read the index of $line"
		else
			say "note: the index of $line could not be refreshed; using the old one"
		fi
	fi
	apt-get "${opts[@]}" "$@"
}

# deb_src_dsc DIR LINE PACKAGE: "NAME SHA256" of PACKAGE's .dsc in the
# source index LINE (kept in DIR)
deb_src_dsc() {
	local out
	out=$(deb_apt "$1" "$2" -qq source --print-uris "$3") ||
		die "apt-get source --print-uris $3 ($2) failed"
	awk '$2 ~ /\.dsc$/ { sub(/^SHA256:/, "", $4); print $2, $4; exit }' <<<"$out"
}

# deb_src_fetch DIR LINE PACKAGE NAME SHA256 DL: PACKAGE's source package
# (the .dsc NAME and its files) into DL, once, the .dsc checked against
# SHA256 (deb_src_dsc's); dpkg-source -x checks the rest against the .dsc
deb_src_fetch() {
	local d=$1 line=$2 pkg=$3 name=$4 sum=$5 dl=$6
	[ -f "$dl/fetched" ] && return 0
	rm -rf "$dl"
	mkdir -p "$dl"
	say "fetching the ${name%.dsc} source package ($line)"
	(cd "$dl" && deb_apt "$d" "$line" source --download-only "$pkg" >&2) ||
		die "apt-get source $pkg ($line) failed"
	[ "$(sha256sum <"$dl/$name" | cut -d' ' -f1)" = "$sum" ] ||
		die "$dl/$name does not match the index of $line"
	touch "$dl/fetched"
}

# deb_src_unpack DSC DIR: the source package's tree, its patches applied
deb_src_unpack() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	dpkg-source -q -x "$1" "$2" >"$2.unpack.log" 2>&1 ||
		die "dpkg-source -x failed, see $2.unpack.log"
	rm -f "$2.unpack.log"
}
