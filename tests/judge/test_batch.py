"""Issue 27.3 at the judge's level: a batch request is the online request, and a batch answer is
graded as the online judge grades (majority of samples, the one re-ask of a malformed reply, the
batch price). The real SDK's messages.batches against tests/helpers/judge_server.py."""

from __future__ import annotations

import json
import re

import pytest

from scarbook.judge.artifact import Artifact
from scarbook.judge.batch import BatchGrader, grade_pending, poll, results, submit
from scarbook.judge.pricing import DEFAULT_PRICES
from scarbook.models import BatchUse, Check
from tests.helpers.judge_server import judge_server, make_judge, tool_reply  # noqa: F401

RUBRIC = ["the answer names the file", "the answer gives its size"]
CHECK = Check("llm_judge", {"rubric": RUBRIC, "include_task": True})
ART = Artifact("wrote a.txt, 12 bytes", "the agent's final output", "output", 21)
PRICE = DEFAULT_PRICES["claude-sonnet-4-6"]


def nonce_of(params: dict) -> str:
    return params["messages"][0]["content"][1]["text"].split("<<<ARTIFACT ", 1)[1][:32]


async def batch_of(grader: BatchGrader, result):
    pending = grader.take(result)
    pending.case_id, pending.k, pending.index = "c", 1, 0
    status = await submit(grader.judge, [pending])
    assert (await poll(grader.judge, status.id)).processing_status == "ended"
    return pending, status.id, await results(grader.judge, status.id)


async def test_three_samples_are_the_online_requests_and_are_graded_by_majority(judge_server):
    judge_server.default = tool_reply([("PASS", "a.txt"), ("PASS", "12 bytes")])
    await make_judge(judge_server, samples=3).grade_artifact(CHECK, ART, "write a.txt")
    online = judge_server.bodies()

    grader = BatchGrader(make_judge(judge_server, samples=3))
    waiting = await grader.grade_artifact(CHECK, ART, "write a.txt")
    assert (waiting.status, waiting.detail) == ("skipped", "judge skipped (waiting for the batch judge)")
    assert len(judge_server.requests) == 3  # nothing sent yet
    judge_server.push(tool_reply([("PASS", "a.txt"), ("FAIL", "no size")]),
                      tool_reply([("PASS", "a.txt"), ("PASS", "12 bytes")]),
                      tool_reply([("PASS", "a.txt"), ("FAIL", "no size")]))
    pending, batch_id, answers = await batch_of(grader, waiting)
    sent = [r["params"] for r in judge_server.batch_requests()]
    assert len({nonce_of(p) for p in sent}) == 1  # the run's samples share one nonce, as online

    def bare(body):
        return re.sub(r"[0-9a-f]{32}", "N", json.dumps(body, sort_keys=True))

    assert [bare(p) for p in sent] == [bare(b) for b in online]
    assert sent[0]["temperature"] == 0.0  # online it travels in extra_body; a batch request's params hold it

    graded = await grade_pending(grader.judge, pending, answers, batch_id)
    assert graded.status == "fail" and graded.detail == "1/2 rubric items PASS; FAIL item 2: no size"
    assert graded.judge.items[1].votes == ("FAIL", "PASS", "FAIL")
    assert graded.judge.calls == 3 and graded.judge.batch == BatchUse(batch_id, 3)
    assert graded.judge.usage.cost_usd == pytest.approx(3 * (1000 * PRICE.input + 100 * PRICE.output) / 1e6 / 2)


async def test_a_malformed_batch_reply_is_asked_again_online_once(judge_server):
    grader = BatchGrader(make_judge(judge_server))
    waiting = await grader.grade_artifact(CHECK, ART, "write a.txt")
    judge_server.push(tool_reply(tool_input={"items": []}))  # the batch's answer: no item graded
    pending, batch_id, answers = await batch_of(grader, waiting)
    judge_server.push(tool_reply([("PASS", "a.txt"), ("PASS", "12 bytes")]))  # the online re-ask
    graded = await grade_pending(grader.judge, pending, answers, batch_id)
    assert graded.status == "pass" and graded.judge.reasks == 1 and graded.judge.calls == 2
    reask = judge_server.requests[-1]
    assert reask["path"] == "/v1/messages" and nonce_of(reask["body"]) != nonce_of(pending.samples[0]["params"])
    one = (1000 * PRICE.input + 100 * PRICE.output) / 1e6
    assert graded.judge.usage.cost_usd == pytest.approx(one / 2 + one)  # batch price, then online


async def test_a_request_the_results_do_not_answer_is_a_judge_error(judge_server):
    grader = BatchGrader(make_judge(judge_server))
    waiting = await grader.grade_artifact(CHECK, ART, "write a.txt")
    pending = grader.take(waiting)
    graded = await grade_pending(grader.judge, pending, {}, "msgbatch_x")
    custom_id = pending.samples[0]["custom_id"]
    assert (graded.status, graded.detail) == ("error", f"judge batch msgbatch_x has no result for request {custom_id}")
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", custom_id)  # as the API requires
