"""Quiz: the hand-written question bank (``bank``), scheduling, progress store and screens."""
