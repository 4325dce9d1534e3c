"""What a plan means and what it costs: the plan checker, the one evaluator, Monte Carlo
replay, the discrete-event engine (worst-case rollouts and sampled runs) and online
runs with the metrics a cluster operator reads."""

from validation.check import Violation, check_plan, relaunch_notes
from validation.evaluate import (
    Evaluation,
    JobCost,
    ScenarioCost,
    evaluate,
    evaluate_scenario,
    scenario_costs,
)
from validation.montecarlo import MonteCarloResult, replay, sample_epochs
from validation.online import OnlineRun, busy_gpus, run_online
from validation.scenario import scenario_instance
from validation.simulator import SimulationError, SimulationResult, rollout, simulate

__all__ = [
    "Evaluation",
    "JobCost",
    "MonteCarloResult",
    "OnlineRun",
    "ScenarioCost",
    "SimulationError",
    "SimulationResult",
    "Violation",
    "busy_gpus",
    "check_plan",
    "evaluate",
    "evaluate_scenario",
    "relaunch_notes",
    "replay",
    "rollout",
    "run_online",
    "sample_epochs",
    "scenario_costs",
    "scenario_instance",
    "simulate",
]
