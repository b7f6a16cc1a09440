"""Domain layer: taxonomy, contract logic and the file schemas. Imports neither textual nor litellm."""
