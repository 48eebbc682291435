"""An MCP tool result as the text a model reads, and the binary parts kept beside it.

Text blocks are joined as they came. Anything else is described in one bracketed line (what
it is, its type and size) rather than pasted: a model cannot read base64 and it would only
crowd the window. The bytes of images, audio and blob resources are not dropped: `result_blobs`
gives them to the EvidenceBody, which keeps them whole. A result with no blocks but structured
content gives that content as JSON. The whole text is stored as evidence; a long one reaches
the model through the usual window. Tools that only run as tasks are listed apart.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from vak_desktop.context.payloads import EvidenceBlob
from vak_desktop.runtime.tools.mcp.errors import RemoteTool

if TYPE_CHECKING:
    from mcp.types import CallToolResult


def result_text(result: CallToolResult) -> str:
    parts = [_block(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    return "\n".join(parts) if parts else "(the tool returned no content)"


def _block(block: Any) -> str:
    from mcp.types import (  # a result exists, so the SDK is loaded already
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        kind = "image" if isinstance(block, ImageContent) else "audio"
        size = _decoded_size(block.data)
        return f"[{kind} {block.mime_type}, {size:,} bytes, kept as evidence, not shown]"
    if isinstance(block, ResourceLink):
        about = f" — {block.description}" if block.description else ""
        return f"[resource link {block.uri} ({block.name}){about}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        if isinstance(resource, BlobResourceContents):
            mime = resource.mime_type or "binary"
            size = _decoded_size(resource.blob)
            return f"[resource {resource.uri}: {mime}, {size:,} bytes, kept as evidence]"
    return f"[{getattr(block, 'type', type(block).__name__)} content, not shown]"


def result_blobs(result: CallToolResult) -> tuple[EvidenceBlob, ...]:
    """The binary parts of a result (images, audio, blob resources), bytes as they came."""
    from mcp.types import AudioContent, BlobResourceContents, EmbeddedResource, ImageContent

    blobs: list[EvidenceBlob] = []
    for block in result.content:
        if isinstance(block, ImageContent | AudioContent):
            blobs.append(EvidenceBlob(block.mime_type, block.data))
        elif isinstance(block, EmbeddedResource) and isinstance(
            block.resource, BlobResourceContents
        ):
            resource = block.resource
            blobs.append(
                EvidenceBlob(
                    resource.mime_type or "application/octet-stream",
                    resource.blob,
                    str(resource.uri),
                )
            )
    return tuple(blobs)


def _decoded_size(data: str) -> int:
    """Bytes a base64 string decodes to, without decoding it."""
    return len(data) * 3 // 4 - data[-2:].count("=")


def tool_listing(server: str, tools: tuple[RemoteTool, ...]) -> str:
    """A server's tools with their descriptions and parameter schemas, for `{"server": S}`."""
    callable_ = [t for t in tools if t.task_support != "required"]
    task_only = [t.name for t in tools if t.task_support == "required"]
    if not callable_:
        return f"MCP server {server!r} offers no tools this app can call." + _task_note(task_only)
    lines = [
        f"MCP server {server!r} offers {len(callable_)} tools. Call one with "
        f'{{"server": "{server}", "tool": NAME, "arguments": {{...}}}}.' + _task_note(task_only)
    ]
    for tool in callable_:
        lines.append("")
        lines.append(f"## {tool.name}")
        if tool.description:
            lines.append(tool.description.strip())
        schema = json.dumps(tool.input_schema, ensure_ascii=False, sort_keys=True)
        lines.append(f"arguments schema: {schema}")
    return "\n".join(lines)


def _task_note(names: list[str]) -> str:
    if not names:
        return ""
    return (
        f" ({', '.join(sorted(names))} run only as MCP tasks, which this app does not start, "
        "so they are not offered.)"
    )
