#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# `make deps demo` and `make deps test` are one invocation each on a
# fresh machine: pkg-config knows no library until deps has installed
# them, so nothing may ask it before deps has run.

. "$(atf_get_srcdir)/../lib/suite.subr"

# A fresh machine, as make sees it: apt-get and npm only note that they
# ran; pkg-config fails, as it does for a missing package, until
# "apt-get install" has run, and then answers as the real one does.
fresh_path()
{
	mkdir -p fake
	real=$(command -v pkg-config)
	cat > fake/apt-get <<EOF
#!/bin/sh
echo "apt-get \$*" >> "$(pwd)/ran"
[ "\$1" = install ] && touch "$(pwd)/installed"
exit 0
EOF
	cat > fake/npm <<EOF
#!/bin/sh
echo "npm \$*" >> "$(pwd)/ran"
EOF
	cat > fake/pkg-config <<EOF
#!/bin/sh
if [ ! -e "$(pwd)/installed" ]; then
	echo "pkg-config \$* before the packages" >> "$(pwd)/ran"
	echo "Package \$2 was not found in the pkg-config search path." >&2
	exit 1
fi
exec "$real" "\$@"
EOF
	chmod 755 fake/*
	PATH=$(pwd)/fake:$PATH
	export PATH
}

atf_test_case deps_then_build
deps_then_build_head()
{
	atf_set "descr" "make deps TARGET in one invocation: the build gets the library flags of what deps installed, also under -j2"
	atf_set "require.progs" "pkg-config make cc"
	atf_set "timeout" "120"
}
deps_then_build_body()
{
	fresh_path
	# mcpd/jsonrpc.c uses strlcpy: without libbsd's flags it does
	# not build, as on the machine of the report.
	for j in 1 2; do
		rm -rf obj installed ran
		atf_check -o ignore -e ignore make -j$j -C "$(as_src)" \
		    BUILD="$(pwd)/obj" deps "$(pwd)/obj/mcpd/jsonrpc.o" \
		    "$(pwd)/obj/regress/common/t_frame"
		[ -f obj/mcpd/jsonrpc.o ] || atf_fail "-j$j: nothing built"
		if grep -q "before the packages" ran; then
			cat ran >&2
			atf_fail "-j$j: pkg-config was asked before deps ran"
		fi
		grep -q "^apt-get install" ran ||
		    atf_fail "-j$j: deps did not install packages"
	done
}

atf_init_test_cases()
{
	atf_add_test_case deps_then_build
}
