# TAP for the shell unit tests (layers.sh, pipes.sh, docmap.sh, sizes.sh,
# reasons.sh), as tap.h is for the C ones: source it, call ok per check,
# end with tap_done.
n=0 failed=0

ok() { # ok STATUS DESC [DETAIL...]: STATUS 0 passes; the details say why not
	local st=$1 desc=$2
	shift 2
	n=$((n + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		failed=$((failed + 1))
		printf '#   %s\n' "$@"
	fi
}

tap_done() { # the plan; the status: 0 when every check passed
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
