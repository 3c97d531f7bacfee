"""rangestats: small descriptive-statistics helpers over lists of numbers."""

from .central import StatisticsError, mean, median, mode, multimode, midrange, weighted_mean
from .spread import variance, stdev, data_range, mean_absolute_deviation, zscores
from .percentiles import percentile, quartiles, iqr, percentile_rank, five_number_summary, outliers
from .binning import bin_edges, bin_index, histogram, moving_average, exponential_moving_average

__all__ = [
    "StatisticsError",
    "mean",
    "median",
    "mode",
    "multimode",
    "midrange",
    "weighted_mean",
    "variance",
    "stdev",
    "data_range",
    "mean_absolute_deviation",
    "zscores",
    "percentile",
    "quartiles",
    "iqr",
    "percentile_rank",
    "five_number_summary",
    "outliers",
    "bin_edges",
    "bin_index",
    "histogram",
    "moving_average",
    "exponential_moving_average",
]
