//! Unit tests of the multi-GPU scope: auto traits, NCCL's reductions on the host, refused
//! device sets.

use super::*;
use crate::error::Error;
use crate::matrix::ColumnsMut;

#[test]
fn multi_types_cross_threads() {
    fn assert<T: Send + Sync>() {}
    assert::<MultiScope<'static, 'static>>();
    assert::<Device<'static, 'static, 'static>>();
    assert::<DeviceLane<'static, 'static>>();
    assert::<DeviceStream<'static, 'static, 'static>>();
    assert::<OnDevice<'static, ColumnsMut<'static, f32>>>();
    assert::<Rank<'static, f32>>();
    assert::<Communicator>();
}

#[test]
fn empty_and_mixed_device_sets_are_refused() {
    assert!(matches!(scope_multi(&[], |_| Ok(())), Err(Error::Devices { .. })));
    assert!(matches!(Communicator::new(&[]), Err(Error::Devices { .. })));
}
