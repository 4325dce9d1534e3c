"""The sane bounds of instance and plan data (docs/model.md, "Bounds on the data").

Each bound lies far beyond any real cluster or training job, and close enough that no
figure computed from data within them can overflow to ``inf``, no structure built from
them exhausts memory, and times stay where an absolute tolerance of 1e-9 h is still
above the rounding of a double (below 4e6 h). Data outside is refused when read, with
the field, the value and the bound.
"""

from __future__ import annotations

MAX_HOURS = 1e5  # release and due times; ~11 years
MAX_RUN_HOURS = 1e5  # one configuration running all of a job's epochs
MIN_EPOCH_HOURS = 1e-5  # 36 ms per epoch
MAX_EPOCH_HOURS = 1e4
MAX_EPOCHS = 1e7  # a job's maximum epochs (its last stopping point)
MIN_BLOCK_EPOCHS = 1e-3  # between two stopping points (and before the first)
MAX_STOPS = 1000  # stopping points per job
MIN_SLOT_HOURS = 1e-3  # 3.6 s
MAX_SLOT_HOURS = 1e3
MAX_RELAUNCH_HOURS = 1e3  # a restart's overhead (real ones take seconds to minutes)
MAX_POWER_W = 1e5  # per GPU (real ones draw under 1.5 kW)
MAX_NODE_POWER_W = 1e6  # a node's base power (real servers draw a few kW)
MAX_BOOT_KWH = 1e4  # a node's boot (real servers draw well under 1 kWh booting)
MAX_MEMORY_GB = 1e6
MAX_PRICE = 1e6  # currency per kWh (and per tonne of CO2)
MIN_PRICE = 1e-9  # a positive energy_price (0 is free energy)
MAX_CARBON = 1e5  # g CO2-eq per kWh (real grids emit under 1,200)
MAX_SERIES = 1_000_000  # values of a price or carbon series (a year of 5-minute prices is 105,120)
MAX_WEIGHT = 1e30  # currency per hour late (above every default weight within the bounds)
MAX_PRIORITY = 1e6
MAX_GPUS_PER_NODE = 1024
MAX_CPU_CORES = 1_000_000
MAX_SHARE = 64  # jobs per shared GPU
MAX_NODES = 100_000
MAX_JOBS = 1_000_000
MAX_ID_CHARS = 128  # ids and names: printable, no control characters
MAX_PLAN_HOURS = 1e9  # a plan's times (plans of many long jobs end late, never at 1e308)
# an instance or plan file (a million jobs take about 400 MiB), and a history file's text
# (gunzipped: a small gzip file may expand without end)
MAX_FILE_BYTES = 512 << 20
# the jobs of a history file (gpusched fit-stops); Helios, the largest public trace of
# GPU jobs, has 3.4 million, and ten million rows take about 300 MB in memory
MAX_HISTORY_JOBS = 10_000_000
MAX_NESTING = 32  # JSON containers within containers (the formats use at most 6)
