#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A guest-chosen index must be clamped under speculation before it selects
# a load (Spectre v1; ARCHITECTURE.md, "Security model"). This fails on
# the two shapes of that bug:
#   - an array subscript that reads a command-block field itself
#     (hdr->, arg->, req->, req[i].) without pfm_index_nospec(),
#     pfm_pmc_slot() or pfm_pmd_slot() around it: cmd_table[hdr->cmd],
#     pages[arg->first_page + i];
#   - a raw pmc_slot[]/pmd_slot[] lookup outside pfm_pmu.c, which builds
#     the tables: every other lookup, whoever chose the number (a guest,
#     a restored stream, the backend), goes through pfm_priv.h's
#     accessors, which clamp and give no slot for an unimplemented
#     register.
# It cannot follow a guest value copied into a local: review still must.
#   scripts/nospec-check.sh [FILE...]   (default: kvm/engine/*.c)
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
[ $# -gt 0 ] || set -- kvm/engine/*.c

perl -e '
my $bad = 0;
my %raw_ok = map { $_ => 1 } qw(pfm_pmu.c);
my $guest = qr/(?:\bhdr->|\barg->|\breq->|\breq\[[^\]]*\]\.)/;
my $clamp = qr/^\s*(?:pfm_index_nospec|pfm_pmc_slot|pfm_pmd_slot)\s*\(/;
my $sub = qr/(\w+(?:->\w+|\.\w+)*)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]/;
for my $f (@ARGV) {
	open(my $fh, "<", $f) or die "$f: $!\n";
	(my $base = $f) =~ s{.*/}{};
	while (my $l = <$fh>) {
		next if $l =~ m{^\s*(?:/?\*|//)};
		# subscripts (one level of nested brackets), and those inside them
		my @todo = ($l);
		while (defined(my $s = shift @todo)) {
			while ($s =~ /$sub/g) {
				my ($arr, $idx) = ($1, $2);
				push @todo, $idx;
				if ($idx =~ $guest && $idx !~ $clamp) {
					print "$f:$.: $arr\[$idx\]: guest field as index, not clamped\n";
					$bad++;
				}
				if ($arr =~ /(?:^|->|\.)(?:pmc_slot|pmd_slot)$/ &&
				    !$raw_ok{$base}) {
					print "$f:$.: $arr\[$idx\]: raw slot lookup; use pfm_pmc_slot/pfm_pmd_slot\n";
					$bad++;
				}
			}
		}
	}
	close($fh);
}
if ($bad) {
	print "nospec-check: $bad unclamped guest index(es)\n";
	exit 1;
}
printf "nospec-check: %d files clean\n", scalar(@ARGV);
' "$@"
