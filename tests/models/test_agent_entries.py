"""A session of several agents keeps each of them as a typed record (SessionInfo.agents: AgentEntry), read
and written key for key: session.json's `agents` list comes back as it was, a key this version does not
know included, and a session of one agent writes no `agents` key at all."""

from __future__ import annotations

import json

from scarbook.models import SessionInfo
from scarbook.models.session_parts import AgentEntry

DOC = {"id": "s1", "case_ids": ["alpha"], "agents": [
    {"name": "base", "type": "command", "fingerprint": "0123456789ab", "label": "command: ./agent.sh 9"},
    {"label": "command: ./agent.sh 6", "name": "cand", "type": "command", "fingerprint": "ba9876543210",
     "from_a_newer_version": [1, 2]}]}


def test_agents_are_records_read_and_written_as_they_were() -> None:
    info = SessionInfo.from_dict(json.loads(json.dumps(DOC)))
    assert info.agent_names == ["base", "cand"]
    base, cand = info.agents
    assert isinstance(base, AgentEntry) and (base.type, base.label) == ("command", "command: ./agent.sh 9")
    assert cand.fingerprint == "ba9876543210"
    written = info.to_dict()["agents"]
    assert json.dumps(written) == json.dumps(DOC["agents"])  # key order and the unknown key kept


def test_a_built_entry_writes_its_keys_in_field_order_and_one_agent_writes_none() -> None:
    info = SessionInfo(id="s2", agents=[AgentEntry("base", "demo", "f00", "demo"), AgentEntry("cand")])
    assert info.to_dict()["agents"] == [{"name": "base", "type": "demo", "fingerprint": "f00", "label": "demo"},
                                        {"name": "cand"}]
    assert "agents" not in SessionInfo(id="s3").to_dict()
    assert SessionInfo.from_dict(SessionInfo(id="s3").to_dict()).agents == []
