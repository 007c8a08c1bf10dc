//! Every string of what a host function hands its guest, for the provenance record
//! ([`crate::response::PageWritten`]): the dispatcher walks the whole answer of each function
//! marked `PAGE_CONTENT`, its error included, and the error of every other function, so no
//! body can hand page text over unrecorded.
//! Every answer type must say what strings it holds (the dispatcher requires [`Strings`]); a
//! record lists all its string fields, page-chosen or not, which can only fence more.

use crate::runtime::calling::bindings::v0_2::devtools::tool as old;
use crate::runtime::calling::bindings::v0_3::devtools::tool as new;

/// The strings a value holds, each handed to `visit`.
pub trait Strings {
    fn each_string(&self, visit: &mut dyn FnMut(&str));

    /// The strings of the error it holds, if it is one: a function's error may quote what the
    /// page did (an exception, a value), so every function's errors are recorded.
    fn each_error_string(&self, _visit: &mut dyn FnMut(&str)) {}
}

macro_rules! no_strings {
    ($($type:ty),* $(,)?) => {
        $(impl Strings for $type {
            fn each_string(&self, _visit: &mut dyn FnMut(&str)) {}
        })*
    };
}

no_strings!((), bool, u8, u32, u64, i64, f64);

impl<T> Strings for wasmtime::component::Resource<T> {
    fn each_string(&self, _visit: &mut dyn FnMut(&str)) {}
}

impl Strings for String {
    fn each_string(&self, visit: &mut dyn FnMut(&str)) {
        visit(self);
    }
}

impl<T: Strings> Strings for Vec<T> {
    fn each_string(&self, visit: &mut dyn FnMut(&str)) {
        for item in self {
            item.each_string(visit);
        }
    }
}

impl<T: Strings> Strings for Option<T> {
    fn each_string(&self, visit: &mut dyn FnMut(&str)) {
        if let Some(value) = self {
            value.each_string(visit);
        }
    }
}

impl<T: Strings, E: Strings> Strings for Result<T, E> {
    fn each_string(&self, visit: &mut dyn FnMut(&str)) {
        match self {
            Ok(value) => value.each_string(visit),
            Err(error) => error.each_string(visit),
        }
    }

    fn each_error_string(&self, visit: &mut dyn FnMut(&str)) {
        if let Err(error) = self {
            error.each_string(visit);
        }
    }
}

/// A record's strings: every field is named, those that can hold a string first, the others
/// after `;` (the pattern is exhaustive: a field added to the contract does not compile until
/// it is classified here).
macro_rules! record {
    ($type:ty { $($field:ident),* ; $($other:ident),* $(,)? }) => {
        impl Strings for $type {
            fn each_string(&self, visit: &mut dyn FnMut(&str)) {
                let Self { $($field,)* $($other: _,)* } = self;
                $($field.each_string(visit);)*
            }
        }
    };
}

record!(new::pages::PageInfo { url, title, isolated_context; id, selected });
record!(new::pages::Dialog { message, default_value; kind });
record!(new::pages::Header { name, value; });
record!(new::pages::NetworkRequest {
    method, url, resource_type, state, request_headers, response_headers;
    id, has_post_data, navigation, from_memory_cache, redirect_chain_start, started_at_ms,
    response_ms, duration_ms, encoded_bytes
});
record!(new::pages::ConsoleMessage { text, arguments, stack; id, kind, argument_count, uncaught });
record!(new::pages::Screenshot { mime_type, extension; data });
record!(new::navigate::Navigated { url; before_unload_handled });
record!(new::performance::InsightSet {
    id, url, insights;
    first_contentful_paint_ms, largest_contentful_paint_ms, cumulative_layout_shift,
    total_blocking_time_ms, long_tasks, server_response_ms, redirect_ms
});
record!(new::memory::ClassAggregate { name; count, self_size, retained_size });
record!(new::memory::HeapStatistics {
    classes;
    node_count, total_size, v8_heap, code, js_arrays, strings, system, native, typed_arrays
});
record!(new::pwa::OsAppState { file_handlers; badge_count });
record!(old::pages::Screenshot { mime_type, extension; data });
record!(old::pwa::OsAppState { file_handlers; badge_count });

impl Strings for new::pages::RequestState {
    fn each_string(&self, visit: &mut dyn FnMut(&str)) {
        if let new::pages::RequestState::Failed(error) = self {
            visit(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_of_an_answer_is_visited_errors_included() {
        let answer: Result<Vec<new::pages::PageInfo>, String> = Ok(vec![new::pages::PageInfo {
            id: 1,
            url: "http://127.0.0.1/".into(),
            title: "A title".into(),
            selected: true,
            isolated_context: None,
        }]);
        let mut seen = Vec::new();
        answer.each_string(&mut |text| seen.push(text.to_string()));
        assert_eq!(seen, ["http://127.0.0.1/", "A title"]);
        let failed: Result<(), String> = Err("thrown by the page".into());
        seen.clear();
        failed.each_string(&mut |text| seen.push(text.to_string()));
        assert_eq!(seen, ["thrown by the page"]);
    }
}
