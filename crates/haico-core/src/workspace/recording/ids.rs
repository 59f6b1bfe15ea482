//! New ids for plan steps and preferences, the same in every revision that names them.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::*;
use crate::workspace::error::WorkspaceError;
use haico_store::{PlanStep, Preference, journal::HasId, journal::ListOp};

/// Every id a list change names.
pub(super) fn collect_ids<T: DeserializeOwned + HasId>(
    change: &PanelChange,
    into: &mut BTreeSet<i64>,
) {
    if change.whole {
        if let Ok(items) = serde_json::from_value::<Vec<T>>(change.data.clone()) {
            into.extend(items.iter().map(HasId::id));
        }
    } else if let Ok(ops) = serde_json::from_value::<Vec<ListOp<T>>>(change.data.clone()) {
        for op in ops {
            match op {
                ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => {
                    into.extend(items.iter().map(HasId::id));
                }
                ListOp::Update { item } => {
                    into.insert(item.id());
                }
                ListOp::Remove { ids } => into.extend(ids),
            }
        }
    }
}

/// Old ids to new ones.
pub(super) struct IdMap {
    pub(super) steps: BTreeMap<i64, i64>,
    pub(super) preferences: BTreeMap<i64, i64>,
}

impl IdMap {
    /// The change's data with its ids replaced.
    pub(super) fn remap(&self, change: &PanelChange) -> Result<Value, WorkspaceError> {
        let encode = |value: Result<Value, serde_json::Error>| {
            value.map_err(|err| WorkspaceError::Store(err.into()))
        };
        match change.panel.as_str() {
            "plan" => encode(remap_list::<PlanStep>(change, &self.steps, |s, id| {
                s.id = id
            })),
            "preferences" => encode(remap_list::<Preference>(
                change,
                &self.preferences,
                |p, id| p.id = id,
            )),
            _ => Ok(change.data.clone()),
        }
    }
}

pub(super) fn remap_list<T: Serialize + DeserializeOwned + HasId>(
    change: &PanelChange,
    map: &BTreeMap<i64, i64>,
    set: impl Fn(&mut T, i64),
) -> Result<Value, serde_json::Error> {
    let new = |id: i64| map.get(&id).copied().unwrap_or(id);
    let fix = |item: &mut T| {
        let id = new(item.id());
        set(item, id);
    };
    if change.whole {
        let mut items: Vec<T> = serde_json::from_value(change.data.clone())?;
        items.iter_mut().for_each(fix);
        return serde_json::to_value(items);
    }
    let mut ops: Vec<ListOp<T>> = serde_json::from_value(change.data.clone())?;
    for op in &mut ops {
        match op {
            ListOp::Insert { items, .. } | ListOp::Add { items } | ListOp::Set { items } => {
                items.iter_mut().for_each(fix);
            }
            ListOp::Update { item } => fix(item),
            ListOp::Remove { ids } => ids.iter_mut().for_each(|id| *id = new(*id)),
        }
    }
    serde_json::to_value(ops)
}
