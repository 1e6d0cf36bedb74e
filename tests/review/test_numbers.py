"""How the report writes numbers (bayesrank.review.numbers): the rules the issue spells out."""

from bayesrank.review.numbers import count, estimate_interval, p_equals, p_value, percent, probability


def test_counts_are_integers():
    assert count(1.67025e6) == "1,670,250" and count(14510.0) == "14,510"
    assert count(25101.96) == "25,102" and count(12.34) == "12.3"  # effective numbers: rounded above 100


def test_p_values_have_two_digits_and_a_floor():
    assert [p_value(x) for x in (2.01e-284, 0.0, 1.98e-8, 0.00943, 0.1, 0.38, 1.0)] == \
        ["< 1e-16", "< 1e-16", "2.0e-08", "0.0094", "0.10", "0.38", "1"]
    assert p_equals(0.0) == "p < 1e-16" and p_equals(0.1) == "p = 0.10"


def test_an_estimate_and_its_interval_share_one_precision():
    assert estimate_interval(0.09634, 0.06271, 0.13) == "0.096 [0.063, 0.130]"
    assert estimate_interval(0.0223, -0.004268, 0.04886) == "0.0223 [−0.0043, 0.0489]"
    assert estimate_interval(0.0963, 0.0627, None) == "0.0963 [0.0627, ∞)"  # one-sided: 3 digits of the largest


def test_posterior_shares_and_percentages():
    assert probability(1.0, 2000) == "> 0.9995" and probability(0.0, 2000) == "< 0.0005"
    assert probability(0.9455, 2000) == "0.946"
    assert percent(198 / 1670250) == "0.012%" and percent(0.0079) == "0.79%" and percent(0.5) == "50%"
