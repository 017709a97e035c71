# Replayed runs against runs that wait for each stage, alternated twice in one process:
#   python3 bench_sql/run_timed.py gpusql bench_sql/replay_repeats.sql --data "--tpch 10" --wall
EACH SET replay_repeats = off | SET replay_repeats = on | SET replay_repeats = off | SET replay_repeats = on
@tpch/q??.sql
