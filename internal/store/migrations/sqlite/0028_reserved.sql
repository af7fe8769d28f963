-- Left empty: this number is kept for another change, so that the
-- migrations stay numbered 1, 2, 3… with 0029 after it.
SELECT 1;
