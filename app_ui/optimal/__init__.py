"""The best possible mechanism as a yardstick (docs/math.md §18): settings, views, words and exports of its page."""
