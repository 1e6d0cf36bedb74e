"""bayesrank from Python: review a leaderboard held in a DataFrame, look at the answer, save the report.

Cells (``# %%``) run one by one in Jupyter, VS Code or Spyder; in a notebook the last expression of a
cell is displayed (a result's ``_repr_html_``: its claims or its leaderboard), here it is printed.

    python examples/quickstart.py [OUT_DIR]       # default out/quickstart

Runs in about ten seconds on the bundled NBA 2023-24 season (MIT) and the bundled lm-eval 2023
published table (MIT); the Bayesian answers use the Laplace approximation (``fast=True``).
"""

# %% The data: a DataFrame with columns of our own names
import sys
from pathlib import Path

import pandas as pd

from bayesrank.bt import BradleyTerry
from bayesrank.datasets import path
from bayesrank.review import review

out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/quickstart")
games = pd.read_csv(path("nba"))
games = pd.DataFrame({"home": games["home_team"], "away": games["away_team"],
                      "result": (games["home_pts"] > games["away_pts"]).map({True: "H", False: "A"})})
print(games.head(3))

# %% Review two claims: the same columns= and outcome_map= as `bayesrank review FILE --columns ...`
report = review(games, columns="a=home,b=away,outcome=result", outcome_map="H=a,A=b",
                claims=["top1", "Boston Celtics>Denver Nuggets"], fast=True, budget=50)
print(repr(report))  # a notebook shows `report` as the claims table with coloured verdicts

# %% Every number of the claims table, as a DataFrame
claims = report.table()
print(claims[["claim", "verdict", "estimate", "lower", "upper", "p_value", "probability"]].to_string(index=False))

# %% The fit behind it: a Bradley-Terry leaderboard with 95% intervals
fit = BradleyTerry(games, columns="a=home,b=away,outcome=result", outcome_map="H=a,A=b").fit("mle")
print(repr(fit))  # in a notebook: the leaderboard's first rows and the convergence line

# %% Save: the page, and beside it the Markdown and the JSON
written = report.save(out / "review.html")
fit.save(out / "leaderboard.csv")
print("wrote", ", ".join(str(p) for p in written), "and", out / "leaderboard.csv")

# %% A published results table (accuracy and n) as a pyarrow Table: kind "table" is detected
import pyarrow.csv  # noqa: E402 (the cell's own import)

table = pyarrow.csv.read_csv(path("lm-eval-2023-table"))
published = review(table, claims=["top1@arc_challenge"])
print(repr(published))
