"""GitHub integration: the action's settings, workflow commands and the PR comment."""
