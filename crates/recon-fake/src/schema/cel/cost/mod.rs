//! cel-go's cost model: what an expression may cost, estimated when the CRD is written
//! ([`estimate`], from the sizes the schema allows, [`schema_size`]), and what an evaluation
//! costs ([`actual`]), in cel-go's units (`common/cost.go`; an identifier or a field selection
//! is one, a call one plus what it traverses, a list literal ten).

pub(super) mod actual;
pub(super) mod estimate;
pub(super) mod schema_size;

/// `common.SelectAndIdentCost`.
pub(super) const SELECT_AND_IDENT: u64 = 1;
/// `common.ListCreateBaseCost`.
pub(super) const LIST_CREATE: u64 = 10;
/// `common.MapCreateBaseCost`.
pub(super) const MAP_CREATE: u64 = 30;
/// `common.StringTraversalCostFactor`: a tenth per character or byte.
pub(super) const STRING_TRAVERSAL: f64 = 0.1;
/// `common.RegexStringLengthCostFactor`.
pub(super) const REGEX_LENGTH: f64 = 0.25;

/// `celconfig.PerCallLimit`: what one evaluation of one rule may cost.
pub(super) const PER_CALL_LIMIT: u64 = 1_000_000;
/// `celconfig.RuntimeCELCostBudget`: what all rules of one write may cost together.
pub(super) const RUNTIME_BUDGET: u64 = 10_000_000;
/// `StaticEstimatedCostLimit`: the largest estimated cost of one rule (times the number of
/// times it may run) a CRD may declare.
pub(super) const STATIC_EXPRESSION_LIMIT: u64 = 10_000_000;
/// `StaticEstimatedCRDCostLimit`: the largest estimated cost of all rules of a schema.
pub(super) const STATIC_CRD_LIMIT: u64 = 100_000_000;
/// `celconfig.MaxRequestSizeBytes`: sizes the schema leaves unbounded are bounded by it.
pub(super) const MAX_REQUEST_BYTES: i64 = 3 * 1024 * 1024;

/// A range of sizes or costs (cel-go's `SizeEstimate` and `CostEstimate`, which share their
/// arithmetic), saturating at `u64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Range {
    pub(super) min: u64,
    pub(super) max: u64,
}

impl Range {
    pub(super) const UNKNOWN: Range = Range {
        min: 0,
        max: u64::MAX,
    };

    pub(super) const fn fixed(n: u64) -> Range {
        Range { min: n, max: n }
    }

    pub(super) fn add(self, o: Range) -> Range {
        Range {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    pub(super) fn multiply(self, o: Range) -> Range {
        Range {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// `MultiplyByCostFactor`: each bound times `factor`, rounded up.
    pub(super) fn times(self, factor: f64) -> Range {
        Range {
            min: by_factor(self.min, factor),
            max: by_factor(self.max, factor),
        }
    }

    pub(super) fn union(self, o: Range) -> Range {
        Range {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// `multiplyByCostFactor`: `x * factor` rounded up, `u64::MAX` when it does not fit.
pub(super) fn by_factor(x: u64, factor: f64) -> u64 {
    // Go converts to float64 too, so large counts round the same way.
    let product = (x as f64 * factor).ceil();
    if product >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        product as u64
    }
}
