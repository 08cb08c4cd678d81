# SPDX-License-Identifier: ISC
"""The shell set of the differential: commands an agent commonly runs,
each in a fresh scratch directory (its working directory, $S below),
compared host against sandbox by exit status, stdout and stderr.

Each entry: (name, normalisers, script).  The normalisers are the only
differences allowed, each named for what must differ between two runs
on two file systems (see NORMALISERS); an entry with none is compared
byte for byte.  The scratch directory's absolute path differs always
(host /tmp/..., sandbox /work/...) and is the "scratch" normaliser.
"""
import re

# A wheel is a zip with its dist-info (PEP 427): built here with the
# standard library, so that pip installs it with --no-index, offline.
MKWHEEL = r"""python3 - <<'PY'
import base64, hashlib, zipfile
files = {"hello_compat/__init__.py": b"def hi():\n    return 'hi'\n",
         "hello_compat-1.0.dist-info/METADATA":
             b"Metadata-Version: 2.1\nName: hello-compat\nVersion: 1.0\n",
         "hello_compat-1.0.dist-info/WHEEL":
             b"Wheel-Version: 1.0\nGenerator: compat\nRoot-Is-Purelib: true\n"
             b"Tag: py3-none-any\n"}
rec = []
for n, b in files.items():
    d = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=")
    rec.append("%s,sha256=%s,%d" % (n, d.decode(), len(b)))
rec.append("hello_compat-1.0.dist-info/RECORD,,")
files["hello_compat-1.0.dist-info/RECORD"] = ("\n".join(rec) + "\n").encode()
with zipfile.ZipFile("hello_compat-1.0-py3-none-any.whl", "w") as z:
    for n, b in files.items():
        z.writestr(n, b)
PY
"""

# Dates of git's commits, fixed so that the hashes are the same twice.
GITENV = ("GIT_AUTHOR_DATE='2026-12-02T12:00:00Z' "
          "GIT_COMMITTER_DATE='2026-12-02T12:00:00Z' "
          "git -c user.name=compat -c user.email=compat@example.invalid "
          "-c init.defaultBranch=main")

SET = [
    ("ls", [], "touch b a; mkdir d; ls; ls d"),
    ("ls_path", [], "touch f; ls f; ls ./f; ls -d ."),
    # -A: the scratch directory's parent is the harness's on the host
    # and /work's tmpfs in the sandbox.
    ("ls_la", ["time", "dirsize", "spaces"],
     "printf abc > f; mkdir d; ls -lA --time-style=long-iso"),
    ("ls_l", ["time"], "printf abc > f; ln -s f l; ls -l --time-style=long-iso f l"),
    ("stat", ["time", "inode", "device", "blocks", "spaces"],
     "printf abc > f; stat f"),
    ("stat_format", [], "printf abc > f; chmod 640 f; stat -c '%n %s %F %a %U %G' f"),
    ("cp_a", [],
     "mkdir -p src/d; printf x > src/d/f; chmod 640 src/d/f; ln -s f src/d/l; "
     "touch -d '2020-01-02 03:04:05' src/d/f; cp -a src dst; "
     "find dst -printf '%p %m %y %TY-%Tm-%Td %TH:%TM\\n' | sort; "
     "diff -r src dst && echo same"),
    ("cp_r_mv_rm", [],
     "mkdir -p a/b; echo 1 > a/b/c; cp -r a z; mv z/b z/e; rm -r a; "
     "find . | sort"),
    ("du", [],
     "mkdir d; head -c 100000 /dev/zero > d/f; head -c 5000 /dev/zero > d/g; "
     "du -ab d/f d/g; du -k --apparent-size d/f"),
    ("du_sh", ["blocks_du"], "mkdir d; head -c 1000000 /dev/urandom > d/f; du -sh d"),
    ("git", [],
     "%s init -q r && cd r && echo hello > a && %s add a && "
     "%s commit -q -m first && echo more >> a && %s commit -q -am second && "
     "%s log --format='%%H %%s' && %s status --short && %s diff HEAD~1 --stat"
     % ((GITENV,) * 7)),
    ("git_branch_merge", [],
     "%s init -q r && cd r && echo 1 > f && %s add f && %s commit -q -m one && "
     "%s checkout -q -b side && echo 2 > g && %s add g && "
     "%s commit -q -m two && %s checkout -q main && "
     "%s merge -q --ff-only side && %s log --oneline && git ls-files"
     % ((GITENV,) * 9)),
    ("tar_gz", [],
     "mkdir -p t/s; seq 1000 > t/s/n; echo x > t/y; tar czf t.tgz t; "
     "mkdir o; tar xzf t.tgz -C o; tar tzf t.tgz | sort; diff -r t o/t && echo same"),
    ("tar_xz", [],
     "mkdir t; seq 50000 > t/n; tar cJf t.txz t; mkdir o; tar xJf t.txz -C o; "
     "cmp t/n o/t/n && echo same"),
    ("xz_pipe", [],
     "head -c 5000000 /dev/urandom > f; xz -T1 -c f | xz -dc | cmp - f && echo same"),
    ("gzip_bzip2_zstd", [],
     "seq 100000 > f; gzip -k f; bzip2 -k f; zstd -q f; "
     "for x in gz bz2 zst; do mkdir $x; done; gzip -dc f.gz > gz/f; "
     "bzip2 -dc f.bz2 > bz2/f; zstd -qdc f.zst > zst/f; "
     "cmp f gz/f && cmp f bz2/f && cmp f zst/f && echo same"),
    ("zip_unzip", [],
     "mkdir d; seq 100 > d/a; zip -qr z.zip d; mkdir o; cd o; unzip -q ../z.zip; "
     "cmp d/a ../d/a && echo same"),
    ("sqlite3", [],
     "sqlite3 db 'create table t(a integer, b text);' "
     "\"insert into t values (1, 'x'), (2, 'y');\" "
     "'select count(*), sum(a) from t;' 'pragma integrity_check;'"),
    ("make", [],
     "printf 'all: out\\nout: in\\n\\tcp in out\\n' > Makefile; echo x > in; "
     "make; make; cat out"),
    ("cc", [],
     "printf '#include <stdio.h>\\nint main(void){puts(\"hi\");return 3;}\\n' > h.c; "
     "cc -O2 -o h h.c; ./h; echo $?"),
    ("cxx", [],
     "printf '#include <iostream>\\n#include <thread>\\nint main(){"
     "std::thread t([]{std::cout<<\"t\\\\n\";}); t.join(); return 0;}\\n' > h.cc; "
     "c++ -O1 -pthread -o h h.cc && ./h"),
    ("python_venv", [],
     "python3 -m venv --without-pip v && v/bin/python -c "
     "'import sys; print(sys.prefix != sys.base_prefix)'"),
    ("pip_wheel", ["home"],
     MKWHEEL + "python3 -m venv v && v/bin/pip install -q --no-index "
     "--disable-pip-version-check hello_compat-1.0-py3-none-any.whl && "
     "v/bin/python -c 'import hello_compat; print(hello_compat.hi())'"),
    ("python_threads", [],
     "python3 -c 'import concurrent.futures as f, subprocess as s\n"
     "with f.ThreadPoolExecutor(4) as e: print(sum(e.map(abs, range(-9, 1))))\n"
     "print(s.run([\"echo\", \"spawned\"], capture_output=True, text=True).stdout, end=\"\")'"),
    ("find_xargs0", [],
     "mkdir -p 'a b/c'; printf 1 > 'a b/c/x y'; printf 2 > 'a b/z'; "
     "find . -type f -print0 | sort -z | xargs -0 cat; echo; "
     "find . -name '*y' -print0 | xargs -0 -n1 basename"),
    ("sort_S", [],
     "seq 200000 -1 1 > n; sort -n -S 64K -T . n | sha256sum; "
     "sort -S 1M --parallel=2 -r n | head -3"),
    ("timeout", [], "timeout 1 sleep 5; echo $?; timeout -s KILL 1 sleep 5; echo $?"),
    ("background_wait", [],
     "(sleep 0.3; echo a > a) & (sleep 0.1; echo b > b) & wait; cat a b; "
     "sleep 0.1 & p=$!; wait $p; echo $?"),
    ("nohup", [],
     "nohup sh -c 'echo out; echo err >&2' > o 2> e & wait; cat o e"),
    ("pipe_100m", [], "head -c 100000000 /dev/zero | tr '\\0' a | wc -c"),
    ("grep_sed_awk", [],
     "seq 1000 > n; grep -c 7 n; sed -n '/^99/p' n | awk '{s+=$1} END {print s}'; "
     "grep -rl 999 . "),
    ("ln_readlink", ["scratch"],
     "touch f; ln -s f l; ln f h; readlink l; readlink -f l; "
     "test f -ef h && echo hardlink"),
    ("mkfifo", [], "mkfifo p; (echo through > p &); cat p"),
    ("chmod_test", [],
     "touch f; chmod 755 f; test -x f && echo x; chmod 600 f; "
     "test -x f || echo not-x; umask"),
    ("id_uname", [], "id; uname -sm"),
    ("split_cat", [],
     "head -c 300000 /dev/urandom > f; split -b 100000 f p.; ls p.*; "
     "cat p.* | cmp - f && echo same"),
    ("dd", [], "dd if=/dev/zero of=f bs=1M count=20 status=none; wc -c < f"),
    ("diff_patch", [],
     "seq 10 > a; seq 10 | sed s/5/five/ > b; diff -u a b > d.patch; "
     "patch -s a d.patch; cmp a b && echo patched"),
    ("jq", [], "echo '{\"a\":[1,2,3]}' | jq -c '.a | map(.*2)'"),
    ("mktemp_rm", [],
     "d=$(mktemp -d \"$TMPDIR/x.XXXXXX\"); test -d \"$d\" && rm -r \"$d\" && "
     "echo removed"),
    ("xargs_P", [], "seq 20 | xargs -P 4 -n 1 sh -c 'echo $(($0 * $0))' | sort -n | tail -2"),
    ("touch_sort_time", [],
     "touch -d '2020-01-01' old; touch -d '2021-01-01' new; ls -t; ls -tr"),
]

STAMP = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?( [+-]\d{4})?"
NORMALISERS = {
    # Times of files made now.
    "time": [(re.compile(STAMP), "TIME")],
    # The inode number, which no two file systems share.
    "inode": [(re.compile(r"Inode: \d+"), "Inode: N")],
    # The device of the file system.
    "device": [(re.compile(r"Device: \S+"), "Device: D")],
    # Blocks and IO block size are the file system's choice (tmpfs in
    # the sandbox, ext4 on the host).
    "blocks": [(re.compile(r"Blocks: \d+(\s+)IO Block: \d+"),
                r"Blocks: B\1IO Block: B")],
    "blocks_du": [(re.compile(r"^\S+(\s+)d$", re.M), r"SIZE\1d")],
    # Columns padded to the widest of those numbers.
    "spaces": [(re.compile(r"[ \t]+"), " ")],
    # A directory's size is the file system's too.
    "dirsize": [(re.compile(r"^(d\S+\s+\d+\s+\S+\s+\S+\s+)\d+", re.M),
                 r"\1SIZE"), (re.compile(r"^total \d+$", re.M), "total N")],
}


def normalise(text, norms, scratch, home):
    """text with what must differ replaced: the scratch directory and
    HOME (the host's stand-in against /run/home) when named, then each
    other normaliser named."""
    if "scratch" in norms and scratch:
        text = text.replace(scratch, "$S")
    if "home" in norms and home:
        text = text.replace(home, "$HOME")
    for n in norms:
        for rx, repl in NORMALISERS.get(n, []):
            text = rx.sub(repl, text)
    return text
