"""The expression rules of the simplifier by node type: for each kind of node, the rules
tried in order, the first that applies rewrites it (:mod:`symidx.core.simplify.rewriter`). The
rules live by family: divisions and remainders (:mod:`symidx.core.simplify.rules`), their
quotient and remainder identities (:mod:`symidx.core.simplify.quotients`), ``min`` and ``max``
(:mod:`symidx.core.simplify.lattice`)."""

from __future__ import annotations

from sympy import Add, Mul

from symidx.core.expr import CeilDiv, FloorDiv, Max, Min, Mod
from symidx.core.simplify.context import Rule
from symidx.core.simplify.lattice import (
    minmax_by_range,
    minmax_common_terms,
    minmax_distribute,
    minmax_drop_bounded,
    minmax_negated,
    minmax_of_quotients,
    minmax_rounding,
    product_min_max,
    sum_into_minmax,
    sum_min_plus_max,
    sum_minmax_difference,
)
from symidx.core.simplify.quotients import (
    divmod_two_values,
    floordiv_of_mod_of_floordiv,
    floordiv_rounded_down,
    floordiv_split_coefficients,
    mod_reduce_coefficients,
    sum_floordiv_difference,
    sum_join_floordiv,
    sum_parity_quotient,
    sum_recombine_congruent,
    sum_to_mod_partial,
)
from symidx.core.simplify.rules import (
    ceildiv_drop_remainder,
    ceildiv_extract_multiples,
    ceildiv_negative_divisor,
    constant_by_range,
    divide_below_divisor,
    floordiv_cancel_divisor,
    floordiv_cancel_factor,
    floordiv_drop_remainder,
    floordiv_extract_multiples,
    floordiv_negative_divisor,
    floordiv_nested,
    floordiv_of_mod,
    mod_cancel_factor,
    mod_drop_divisor_multiples,
    mod_drop_multiples,
    mod_factor_gcd,
    mod_negative_divisor,
    mod_nested,
    mod_nested_divisor,
    mod_single_period,
    sum_complementary_mods,
    sum_join_mod_digits,
    sum_recombine_div_mod,
    sum_to_mod,
)

__all__ = ["RULES", "PAIR_RULES", "ONE_OPERATION_SUM_RULES"]

#: The rules of each kind of node, in the order they are tried.
RULES: dict[type, tuple[Rule, ...]] = {
    FloorDiv: (constant_by_range, floordiv_extract_multiples, floordiv_cancel_divisor,
               floordiv_drop_remainder, floordiv_nested, floordiv_of_mod,
               floordiv_negative_divisor, floordiv_cancel_factor, divide_below_divisor,
               floordiv_split_coefficients, floordiv_of_mod_of_floordiv,
               floordiv_rounded_down, divmod_two_values),
    Mod: (mod_single_period, mod_drop_multiples, mod_drop_divisor_multiples, mod_factor_gcd,
          mod_nested, mod_negative_divisor, mod_nested_divisor, mod_cancel_factor,
          divide_below_divisor, mod_reduce_coefficients, divmod_two_values),
    CeilDiv: (constant_by_range, ceildiv_negative_divisor, ceildiv_extract_multiples,
              ceildiv_drop_remainder, floordiv_cancel_factor),
    Add: (sum_recombine_div_mod, sum_to_mod, sum_join_mod_digits, sum_complementary_mods,
          sum_floordiv_difference, sum_join_floordiv, sum_parity_quotient,
          sum_to_mod_partial, sum_recombine_congruent, sum_min_plus_max,
          sum_minmax_difference, sum_into_minmax),
    Min: (minmax_by_range, minmax_rounding, minmax_drop_bounded, minmax_distribute,
          minmax_common_terms, minmax_negated, minmax_of_quotients),
    Max: (minmax_by_range, minmax_rounding, minmax_drop_bounded, minmax_distribute,
          minmax_common_terms, minmax_negated, minmax_of_quotients),
    Mul: (product_min_max,),
}

#: The sum rules that rewrite a pair of terms that are both divisions, ``min``s or
#: ``max``es (or multiples of them): none applies to a sum with fewer such terms (the
#: fast-path test ``tests/test_simplify_fast_paths.py`` checks each on such sums).
PAIR_RULES: frozenset[Rule] = frozenset({
    sum_join_mod_digits, sum_floordiv_difference, sum_join_floordiv, sum_parity_quotient,
    sum_recombine_congruent, sum_min_plus_max, sum_minmax_difference,
})
#: The sum rules to try on a sum with a single such term, in :data:`RULES`'s order.
ONE_OPERATION_SUM_RULES: tuple[Rule, ...] = tuple(
    rule for rule in RULES[Add] if rule not in PAIR_RULES)
