"""`recall({"id": …})` with a passage's evidence id returns that message's words whole."""

from __future__ import annotations

from tests.runtime.tools.helpers import call
from vak_desktop.context.payloads import AssistantStep, Directive
from vak_desktop.ledger import Ledger
from vak_desktop.runtime.tools import ToolRegistry
from vak_desktop.runtime.tools.recall import RecallTool


async def test_a_passage_id_recalls_its_message_whole() -> None:
    ledger = Ledger.open(":memory:")
    session = ledger.create_session().id
    asked = ledger.append(session, Directive(text="Maya: my puppy is called Biscuit. " * 20))
    answered = ledger.append(session, AssistantStep(text="Tom: what a name!"))
    registry = ToolRegistry([RecallTool()])
    for entry, text in ((asked, asked.payload.text), (answered, "Tom: what a name!")):  # type: ignore[attr-defined]
        output = await call(registry, ledger, session, "recall", id=entry.id[3:15])
        assert output.content == text and not output.is_error
