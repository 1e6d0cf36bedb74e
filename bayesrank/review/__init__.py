"""The reviewer's report: claims -> verdicts, assembled from every room of the package.

``review(data, claims=[...])`` returns a :class:`ReviewReport` (the package's result protocol);
``bayesrank review`` is its command. This is the only room that uses all the others.
"""

__all__ = ["review", "ReviewReport"]


def __getattr__(name: str) -> object:
    if name == "review":
        from bayesrank.review.api import review

        return review
    if name == "ReviewReport":
        from bayesrank.review.report import ReviewReport

        return ReviewReport
    raise AttributeError(name)
