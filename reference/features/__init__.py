"""Feature transforms made before learning: LETOR's query-level normalisation."""
