//! A page's feature slots: one value per feature type, owned by the page and dropped with it.
//! The page model does not name its features (they sit a layer above it); each feature keeps
//! its state in the slot of its own type, the way Playwright's page owns its screencast.

use std::any::{Any, TypeId};

/// One value per type. A handful of features per page, so a short list beats a map.
#[derive(Default)]
pub struct FeatureSlots {
    slots: Vec<(TypeId, Box<dyn Any + Send + Sync>)>,
}

impl FeatureSlots {
    /// The feature's state, if it has any on this page.
    pub fn get<F: Any + Send + Sync>(&self) -> Option<&F> {
        self.slots
            .iter()
            .find(|(id, _)| *id == TypeId::of::<F>())
            .and_then(|(_, value)| value.downcast_ref())
    }

    /// The feature's state, made with `Default` on first use.
    pub fn get_mut<F: Any + Send + Sync + Default>(&mut self) -> &mut F {
        let at = match self
            .slots
            .iter()
            .position(|(id, _)| *id == TypeId::of::<F>())
        {
            Some(at) => at,
            None => {
                self.slots.push((TypeId::of::<F>(), Box::new(F::default())));
                self.slots.len() - 1
            }
        };
        match self.slots[at].1.downcast_mut() {
            Some(value) => value,
            None => unreachable!("a slot holds the type it is keyed by"),
        }
    }

    /// Puts `value` in its type's slot, replacing what was there.
    pub fn insert<F: Any + Send + Sync>(&mut self, value: F) {
        self.slots.retain(|(id, _)| *id != TypeId::of::<F>());
        self.slots.push((TypeId::of::<F>(), Box::new(value)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Debug, PartialEq)]
    struct Counter(u32);

    #[test]
    fn each_type_has_one_slot_made_on_first_use() {
        let mut slots = FeatureSlots::default();
        assert!(slots.get::<Counter>().is_none());
        slots.get_mut::<Counter>().0 += 2;
        slots.get_mut::<Counter>().0 += 3;
        assert_eq!(slots.get::<Counter>(), Some(&Counter(5)));
        slots.insert(String::from("x"));
        slots.insert(Counter(1));
        assert_eq!(slots.get::<Counter>(), Some(&Counter(1)));
        assert_eq!(slots.get::<String>().map(String::as_str), Some("x"));
    }
}
