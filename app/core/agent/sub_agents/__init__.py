"""Sub-agents: definitions, the host that runs them, their results and orchestration runs."""
