"""Approval rules and the ToolPermissionService that evaluates them."""
