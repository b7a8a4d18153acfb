"""The role factories of the debate graph: `create_<role>(llm, ...) -> node`."""
