"""scarbook/agents: the agent adapters, presets, the demo agent and the sandbox."""
