"""A standard stream the test patched, as the candidate's code uses it (issue 48): a
`StringIO` the test puts in as `sys.stdout` or `sys.stderr` (mock's `new_callable`, a
decorator's injected argument, monkeypatch) is one object on both sides, kept in step,
so what the candidate prints the test then reads, after what the test wrote itself; a
mock put in as `sys.stdout` gets the candidate's writes, and nothing of the wire's own
(no flush the candidate never made: it once hung the witness on a message within a
message). Each correct case passes plain `python -m pytest` in-process and must grade
`pass`."""

from __future__ import annotations

import pytest

from tests.harness import _case, _corpus, assert_plain_passes, expect, grade, item

__all__ = ["grade", "item"]  # the fixtures (tests/harness.py; `backend`: conftest)

pytestmark = pytest.mark.wire

CARRIED = _corpus(
    _case(
        "a-report-printed-after-the-tests-own-header",
        "tally.py",
        """
        import sys


        def tally(votes):
            counts = {}
            for vote in votes:
                counts[vote] = counts.get(vote, 0) + 1
            for name in sorted(counts, key=lambda n: (-counts[n], n)):
                print(f"{name:<6}{counts[name]:>3}")
            sys.stdout.write("-- end\\n")
            return len(counts)
        """,
        """
        import io
        from unittest import mock

        from tally import tally


        @mock.patch("sys.stdout", new_callable=io.StringIO)
        def test_the_report_follows_the_header(screen):
            print("votes")
            assert tally(["oak", "elm", "oak", "ash", "oak", "elm"]) == 3
            assert screen.getvalue().splitlines() == [
                "votes", "oak     3", "elm     2", "ash     1", "-- end"
            ]


        def test_nothing_printed_for_no_votes():
            with mock.patch("sys.stdout", new=io.StringIO()) as screen:
                assert tally([]) == 0
            assert screen.getvalue() == "-- end\\n"
        """,
    ),
    _case(
        "warnings-printed-to-a-stderr-the-test-swapped",
        "checks.py",
        """
        import sys


        def check_ports(ports):
            bad = [p for p in ports if not 0 < p < 65536]
            for p in bad:
                print(f"warning: port {p} out of range", file=sys.stderr)
            return [p for p in ports if p not in bad]
        """,
        """
        import io
        import sys

        from checks import check_ports


        def test_each_bad_port_is_warned_about(monkeypatch):
            errors = io.StringIO()
            monkeypatch.setattr(sys, "stderr", errors)
            assert check_ports([80, 0, 70000, 443]) == [80, 443]
            assert errors.getvalue().count("warning: port") == 2
            assert "port 70000 out of range" in errors.getvalue()
        """,
    ),
    _case(
        "a-mock-stdout-gets-the-writes-and-no-flush",
        "beeper.py",
        """
        def beep(times):
            for i in range(times):
                print("beep", i)
        """,
        """
        from unittest import mock

        from beeper import beep


        def test_the_mock_sees_each_write():
            with mock.patch("sys.stdout") as fake:
                beep(2)
            written = [c.args[0] for c in fake.write.call_args_list]
            assert "".join(written) == "beep 0\\nbeep 1\\n"
            fake.flush.assert_not_called()
        """,
    ),
)


def test_the_corpus_passes_in_plain_pytest(tmp_path) -> None:
    assert_plain_passes(CARRIED, tmp_path)


@pytest.mark.parametrize("name", list(CARRIED))
def test_a_patched_stream_is_the_candidates_too(grade, backend, name: str) -> None:
    expect(grade(CARRIED[name], backend), "pass")
