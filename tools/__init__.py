"""The data tools agents call, each defined once (typed function + docstring) and exposed as
a plain function, a JSON schema and a LangChain tool; all read through a point-in-time view.
See docs/tools.md."""

from tools.render import ToolResult
from tools.spec import ToolSpec
from tools.toolset import REQUIRED_TOOLS, TOOLS, ToolSet

__all__ = ["REQUIRED_TOOLS", "TOOLS", "ToolResult", "ToolSet", "ToolSpec"]
