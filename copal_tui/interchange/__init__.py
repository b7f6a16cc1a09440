"""World files and the JSONL interchange format: parse, validate, import, export."""
