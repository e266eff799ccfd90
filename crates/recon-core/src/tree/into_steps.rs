//! `IntoSteps`: a tuple of sub-reconcilers of different types, as the boxed steps of a
//! [`Sequence`](crate::Sequence).

use super::sub_reconciler::{BoxSubReconciler, SubReconciler};

/// Sub-reconcilers of possibly different types, in order, each boxed into a step: what
/// [`Sequence::of`](crate::Sequence::of) takes. Implemented for tuples of 1 to 16
/// sub-reconcilers, so that a list of steps needs no `.boxed()` on each; its
/// [`into_steps`](IntoSteps::into_steps) feeds the other combinators taking a list of steps too:
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Always, Context, Error, IntoSteps, Sequence, SyncReconciler};
///
/// async fn noop(_: &Context, _: &mut ConfigMap) -> Result<(), Error> {
///     Ok(())
/// }
///
/// let step = || SyncReconciler::<ConfigMap>::new("Noop").sync(noop);
/// let cleanup = Always::new((step(), Sequence::of((step(), step()))).into_steps());
/// let steps = Sequence::of((step(), cleanup, step()));
/// # let _ = steps;
/// ```
///
/// More than 16 steps: nest sequences (a sequence merges its steps' outcomes, and the outcome
/// an error carries, in order, so nesting changes only the tree's shape), or box each step for
/// [`Sequence::new`](crate::Sequence::new).
pub trait IntoSteps<R> {
    /// The steps, boxed, in order.
    fn into_steps(self) -> Vec<BoxSubReconciler<R>>;
}

// One impl per arity, as the language has no variadic generics; each names its type parameters
// with the tuple indices they sit at.
macro_rules! tuple_into_steps {
    ($($step:ident $index:tt),+) => {
        impl<R, $($step),+> IntoSteps<R> for ($($step,)+)
        where
            $($step: SubReconciler<R> + 'static,)+
        {
            fn into_steps(self) -> Vec<BoxSubReconciler<R>> {
                vec![$(BoxSubReconciler::new(self.$index)),+]
            }
        }
    };
}

tuple_into_steps!(A 0);
tuple_into_steps!(A 0, B 1);
tuple_into_steps!(A 0, B 1, C 2);
tuple_into_steps!(A 0, B 1, C 2, D 3);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
tuple_into_steps!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);
