"""Dataset benchmark: 100k verdict rows written and read back by canrun's C++ path and by
pyarrow, over the same rows, in the same run. Reports rows/s and file size as ratios.

usage: python bench/dataset_vs_pyarrow.py BUILD_DIR [ROWS]

C++ write = rows (structs) → Arrow → Parquet bytes → file (atomic); read = file → rows.
pyarrow write = Python dicts → Table.from_pylist → write_table (same zstd codec, same row
group size); read = read_table → to_pylist (rows as Python objects, the like of the C++ read).
"read_table only" (Arrow columns, no rows) is shown too, as pyarrow's floor.
"""
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def best(repeats, work):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    build = Path(sys.argv[1])
    rows_wanted = sys.argv[2] if len(sys.argv) > 2 else "100000"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cpp = json.loads(subprocess.run([str(build / "bench_dataset"), str(tmp), rows_wanted, "3"],
                                        check=True, capture_output=True, text=True).stdout)
        schema = pq.read_schema(tmp / "cpp.parquet")
        schema = schema.remove_metadata()
        rows = []
        with open(tmp / "rows.jsonl") as lines:
            for line in lines:
                row = json.loads(line)
                row["stack"] = json.dumps(row["stack"], separators=(",", ":"))
                row["started_at"] = dt.datetime.fromisoformat(row["started_at"].replace("Z", "+00:00"))
                rows.append(row)
        out = tmp / "pyarrow.parquet"

        def py_write():
            table = pa.Table.from_pylist(rows, schema=schema)
            pq.write_table(table, out, compression="zstd", row_group_size=64 * 1024)

        py_write_s = best(3, py_write)
        py_read_rows_s = best(3, lambda: pq.read_table(out).to_pylist())
        py_read_table_s = best(3, lambda: pq.read_table(out))
        py_bytes = out.stat().st_size

    n = cpp["rows"]
    print(f"dataset benchmark: {n} verdict rows, best of 3")
    print(f"{'':28}{'C++ (canrun)':>16}{'pyarrow':>16}{'ratio C++/py':>14}")
    print(f"{'write rows/s':28}{n / cpp['write_s']:16,.0f}{n / py_write_s:16,.0f}"
          f"{py_write_s / cpp['write_s']:14.2f}")
    print(f"{'read rows/s (to rows)':28}{n / cpp['read_s']:16,.0f}{n / py_read_rows_s:16,.0f}"
          f"{py_read_rows_s / cpp['read_s']:14.2f}")
    print(f"{'read rows/s (table only)':28}{'':16}{n / py_read_table_s:16,.0f}"
          f"{py_read_table_s / cpp['read_s']:14.2f}")
    print(f"{'file bytes':28}{cpp['file_bytes']:16,}{py_bytes:16,}{cpp['file_bytes'] / py_bytes:14.2f}")
    print("ratios above 1 mean C++ is faster (rows/s) or, for file bytes, larger.")


if __name__ == "__main__":
    main()
