"""One (case, seed) of a run: the slot asked, the answer graded (coding items through
the repair loop: the failing tail fed back, up to the loop cap; a disputed answer passed
plain pytest, so it is not sent back), and the case record built, pinned to the
header's grader version and slot settings.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from evalpin.core.instrument.fixtures import CodingItem, GoldenCase
from evalpin.core.instrument.graders.candidate import answer_files
from evalpin.core.instrument.graders.tools import grade_golden
from evalpin.core.instrument.pins import completion_digest, probe_tagged, text_digest
from evalpin.core.reasons import SANDBOX_ERROR, is_disputed, status_of
from evalpin.core.records import CaseRecord, Completion, CompletionRequest, Message, Usage
from evalpin.run.controls import WITNESS_ALONE
from evalpin.run.executors import GradeJob
from evalpin.run.plan import Pair, Plan
from evalpin.run.slots import Slot, SlotError

REPAIR_PROMPT = (
    "The tests failed. This is the end of the test output:\n\n{tail}\n\n"
    "Reply with the complete corrected files."
)


ERROR_CHARS = 2000  # of a failure's own message, on its record


class Executor:
    """Asks the slot, grades, and builds the case record for one (case, seed)."""

    def __init__(
        self,
        plan: Plan,
        slot: Slot,
        grader: str,
        slot_settings: str | None = None,
        probe_digest: str | None = None,
    ) -> None:
        self.plan = plan
        # Joined to every reported model when the probes pin the backend (run/probes.py).
        self.probe_digest = probe_digest
        self.slot = slot
        self.grader = grader
        # The slot's settings digest as the header pinned it, on every record.
        self.slot_settings = slot_settings
        self.cases = {case.id: case for case in plan.fixtures.cases}
        # Never handed to model code: the sandbox drops these names and cuts their values.
        self.secret_names = list(plan.slot_config.secret_env_names())
        # At most --jobs graders at once, however many completions are in flight.
        self.graders = threading.BoundedSemaphore(plan.jobs)
        self.grading = plan.grader()  # where they grade: here, or on a cluster
        self.lost: list[str] = []  # why the executor stopped grading, when it did

    def complete(self, request: CompletionRequest) -> Completion:
        """The slot's completion, holding a pace permit unless the slot holds its own or
        answers from memory (nothing in flight to bound)."""
        if self.slot.paces_requests or not self.plan.slot_config.threads_help:
            return self.slot.complete(request)
        with self.slot.pace.request():
            return self.slot.complete(request)

    def request(
        self,
        case_id: str,
        seed: int,
        messages: list[Message],
        tools: list[Any],
        tool_results: dict[str, Any] | None = None,
    ) -> CompletionRequest:
        c = self.plan.controls
        return CompletionRequest(
            case_id=case_id,
            seed=seed,
            messages=messages,
            tools=tools,
            temperature=c.temperature,
            max_tokens=c.max_tokens,
            tool_results=tool_results or {},
            max_turns=c.max_turns,
        )

    def __call__(self, pair: Pair) -> CaseRecord:
        case_id, seed = pair
        case = self.cases[case_id]
        started = time.monotonic()
        if isinstance(case, GoldenCase):
            record = self._golden(case, seed)
        else:
            record = self._coding(case, seed)
        record.seconds = round(time.monotonic() - started, 3)
        return record

    def _base(self, case: GoldenCase | CodingItem, seed: int, reasons: list[str]) -> CaseRecord:
        return CaseRecord(
            case.id,
            not reasons,
            seed=seed,
            fixture_hash=case.fixture_hash,
            grader_version=self.grader,
            model_slot=self.plan.slot_config.label,
            reasons=reasons,
            slot_settings=self.slot_settings,
            status=status_of(reasons),
        )

    def _fill(self, record: CaseRecord, completion: Completion | None) -> CaseRecord:
        if completion is not None:
            record.tool_names = [t.name for t in completion.tools]
            record.text_digest = text_digest(completion.text)
            record.completion_digest = completion_digest(completion)
            record.reported_model = probe_tagged(completion.model, self.probe_digest)
            record.text = completion.text
            record.tools = list(completion.tools) or None
            record.turns = list(completion.turns) or None
            record.files = dict(completion.files) or None
            record.usage = completion.usage
            record.finish_reason = completion.finish_reason
        else:
            record.tool_names = []
        return record

    def _failed(self, case: GoldenCase | CodingItem, seed: int, exc: SlotError) -> CaseRecord:
        """An error case: no usable completion. The failure's own words and what the
        request got before it failed (turns, tokens) are kept; the runner's scrub cuts
        secret values from them before the record is written."""
        record = self._fill(self._base(case, seed, [exc.reason]), exc.partial)
        record.error = (exc.detail or exc.reason)[:ERROR_CHARS]
        return record

    def _golden(self, case: GoldenCase, seed: int) -> CaseRecord:
        messages = [Message("user", case.user)]
        request = self.request(case.id, seed, messages, case.tools, case.tool_results)
        try:
            completion = self.complete(request)
        except SlotError as exc:
            return self._failed(case, seed, exc)
        return self._fill(self._base(case, seed, grade_golden(case, completion)), completion)

    def _coding(self, item: CodingItem, seed: int) -> CaseRecord:
        if item.language.lower() != "python":
            return self._fill(self._base(item, seed, [SANDBOX_ERROR("unsupported_language")]), None)
        messages = [Message("user", item.prompt)]
        completion: Completion | None = None
        outcome = None
        error = None
        loops = 0
        usage: Usage | None = None  # over every round: each one was paid for
        for attempt in range(self.plan.controls.loops + 1):
            try:
                answer = self.complete(self.request(item.id, seed, messages, []))
            except SlotError as exc:
                if completion is None:
                    return self._failed(item, seed, exc)
                error = f"repair round {attempt}: {exc.reason}"  # keep the last graded try
                break
            completion, loops = answer, attempt
            if answer.usage is not None:
                usage = answer.usage if usage is None else usage + answer.usage
            files = answer_files(answer, item)
            with self.graders:
                alone = self.plan.controls.witness == WITNESS_ALONE
                outcome = self.grading.grade(GradeJob(item, files, seed, witness_alone=alone))
            if outcome.passed or any(map(is_disputed, outcome.reasons)):
                break
            messages = [
                *messages,
                Message("assistant", answer.text),
                Message("user", REPAIR_PROMPT.format(tail=outcome.tail)),
            ]
        assert outcome is not None
        record = self._fill(self._base(item, seed, list(outcome.reasons)), completion)
        record.tail = outcome.tail
        record.failed_tests = list(outcome.failed_tests) or None
        record.witness_tail = outcome.witness_tail or None
        record.witness_failed_tests = list(outcome.witness_failed_tests) or None
        record.loops = loops
        record.error = error
        record.usage = usage
        return record
