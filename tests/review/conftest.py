import pytest

from bayesrank.review import review


@pytest.fixture(scope="module")
def nba_report():
    """The NBA 2023-24 season (1,230 games, no ties) reviewed with a claim of every kind, --fast."""
    return review("nba", fast=True, seed=0, claims=["top1", "topk:3", "Boston Celtics>Denver Nuggets",
                                                   "Denver Nuggets>Boston Celtics", "order"])
