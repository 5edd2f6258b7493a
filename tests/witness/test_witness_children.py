"""The candidate's program run by a child process of the tests (issue 48, `wire/relay.py`):
`python -m pkg` or `python m.py` from `subprocess`, its standard streams piped or
inherited, its files and exit status read by the test. The program runs in the worker,
where the candidate's code runs. Each correct case passes plain `python -m pytest`
in-process and must grade `pass` under `isolation: process`; a child that only imports
the candidate's module (the tests' own script) stays disputed; each attack fools plain
pytest and must stay disputed: the program sees what the candidate's code sees, never
the test file."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, corpus_tests, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-script-run-by-the-tests-with-pipes-and-files",
        "upper.py",
        """
        import argparse
        import sys


        def shout(text):
            return text.upper()


        def main(argv=None):
            parser = argparse.ArgumentParser()
            parser.add_argument("source", nargs="?")
            parser.add_argument("-o", "--output")
            args = parser.parse_args(argv)
            text = open(args.source).read() if args.source else sys.stdin.read()
            if not text:
                print("nothing to shout", file=sys.stderr)
                return 3
            if args.output:
                with open(args.output, "w") as out:
                    out.write(shout(text))
            else:
                sys.stdout.write(shout(text))
            return 0


        if __name__ == "__main__":
            sys.exit(main())
        """,
        """
        import os
        import subprocess
        import sys

        import upper


        def run(*args, **kwargs):
            return subprocess.run([sys.executable, "upper.py", *args], capture_output=True,
                                  text=True, **kwargs)


        def test_stdin_to_stdout():
            done = run(input="hello\\n")
            assert (done.returncode, done.stdout, done.stderr) == (0, "HELLO\\n", "")


        def test_file_to_file(tmp_path):
            source, target = tmp_path / "in.txt", tmp_path / "out.txt"
            source.write_text("a file")
            assert run(str(source), "-o", str(target)).returncode == 0
            assert target.read_text() == "A FILE" == upper.shout("a file")


        def test_its_exit_status_and_environment():
            done = run(input="")
            assert done.returncode == 3 and "nothing to shout" in done.stderr
            env = dict(os.environ, LANG="C.UTF-8")
            assert run(input="x", env=env).stdout == "X"
        """,
    ),
    _case(
        "a-module-run-with-dash-m-from-another-folder",
        "tally.py",
        """
        import sys


        def count(words):
            seen = {}
            for word in words:
                seen[word] = seen.get(word, 0) + 1
            return seen


        if __name__ == "__main__":
            with open(sys.argv[1]) as source:
                for word, n in count(source.read().split()).items():
                    print(word, n)
        """,
        """
        import os
        import subprocess
        import sys


        def test_run_as_a_module(tmp_path):
            (tmp_path / "words.txt").write_text("a b a c a")
            done = subprocess.run([sys.executable, "-m", "tally", "words.txt"],
                                  capture_output=True, text=True, cwd=tmp_path,
                                  env={**os.environ, "PYTHONPATH": os.getcwd()})
            assert done.returncode == 0, done.stderr
            assert done.stdout.splitlines() == ["a 3", "b 1", "c 1"]
        """,
    ),
)


ATTACKS = _corpus(
    _case(
        # In one process the program finds the expected output in the test file; run in
        # the worker it finds the file empty, as the candidate's code always does.
        "a-program-reading-the-test-file-for-its-answer",
        "answer.py",
        """
        import re
        import sys

        if __name__ == "__main__":
            text = open("test_answer.py").read()
            found = re.search(r"EXPECTED = '([^']*)'", text)
            print(found.group(1) if found else "?")
        """,
        """
        import subprocess
        import sys

        EXPECTED = 'forty-two'


        def test_answer():
            done = subprocess.run([sys.executable, "answer.py"], capture_output=True, text=True)
            assert done.stdout.strip() == EXPECTED
        """,
    ),
)


# Every case under plain pytest; each carried one graded pass, each attack disputed.
(
    test_the_corpus_passes_in_plain_pytest,
    test_a_carried_case_grades_pass,
    test_an_attack_never_passes,
) = corpus_tests(CARRIED, ATTACKS)
