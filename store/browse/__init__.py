"""Browse: paged, filterable reads behind the lists and detail screens (worlds, items, COMPASS
queries, dialogues) and behind the cases of a figure."""
