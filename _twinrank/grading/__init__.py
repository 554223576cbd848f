"""The course's grader: exercises written by students, graded against the fast twin."""
