//! Pagination as the reference does it (`utils/pagination.ts` and
//! `McpResponse.#dataWithPagination`): every item when neither size nor index is given, else
//! pages of 20 by default, with its info lines and structured `pagination` object.

use serde_json::{Value, json};

const DEFAULT_PAGE_SIZE: usize = 20;

/// The `pageSize` and `pageIdx` of a list tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Page {
    pub size: Option<u32>,
    pub index: Option<u32>,
}

/// One page of a list: the range shown, the info lines and the structured form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Paginated {
    pub start: usize,
    pub end: usize,
    /// `Invalid page number provided…`, `Showing …`, `Next page: …`, `Previous page: …`.
    pub info: Vec<String>,
    /// The `pagination` value of structured content.
    pub structured: Value,
}

impl Paginated {
    /// The items of this page.
    pub fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        &items[self.start..self.end]
    }
}

/// Cuts `total` items into the page asked for.
pub(crate) fn paginate(total: usize, page: Page) -> Paginated {
    let requested = page.size.is_some() || page.index.is_some();
    let (current, total_pages, start, end, invalid) = if requested {
        let size = page
            .size
            .map_or(DEFAULT_PAGE_SIZE, |size| size.max(1) as usize);
        let total_pages = total.div_ceil(size).max(1);
        let (current, invalid) = match page.index {
            None => (0, false),
            Some(index) if index as usize >= total_pages => (0, true),
            Some(index) => (index as usize, false),
        };
        let start = (current * size).min(total);
        let end = (start + size).min(total);
        (current, total_pages, start, end, invalid)
    } else {
        (0, 1, 0, total, false)
    };
    let has_next = requested && current + 1 < total_pages;
    let has_previous = requested && current > 0;

    let mut info = Vec::new();
    if invalid {
        info.push("Invalid page number provided. Showing first page.".to_string());
    }
    info.push(format!(
        "Showing {}-{end} of {total} (Page {} of {total_pages}).",
        start + 1,
        current + 1
    ));
    if has_next {
        info.push(format!("Next page: {}", current + 1));
    }
    if has_previous {
        info.push(format!("Previous page: {}", current - 1));
    }
    Paginated {
        start,
        end,
        info,
        structured: json!({
            "currentPage": current,
            "totalPages": total_pages,
            "hasNextPage": has_next,
            "hasPreviousPage": has_previous,
            "startIndex": start,
            "endIndex": end,
            "invalidPage": invalid,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::{Page, paginate};
    use serde_json::json;

    fn page(size: Option<u32>, index: Option<u32>) -> Page {
        Page { size, index }
    }

    #[test]
    fn everything_without_options() {
        let result = paginate(45, Page::default());
        assert_eq!((result.start, result.end), (0, 45));
        assert_eq!(result.info, ["Showing 1-45 of 45 (Page 1 of 1)."]);
        assert_eq!(
            result.structured,
            json!({"currentPage": 0, "totalPages": 1, "hasNextPage": false,
                   "hasPreviousPage": false, "startIndex": 0, "endIndex": 45, "invalidPage": false})
        );
    }

    #[test]
    fn first_middle_and_last_pages() {
        let first = paginate(45, page(None, Some(0)));
        assert_eq!(
            first.info,
            ["Showing 1-20 of 45 (Page 1 of 3).", "Next page: 1"]
        );
        let middle = paginate(45, page(Some(20), Some(1)));
        assert_eq!(
            middle.info,
            [
                "Showing 21-40 of 45 (Page 2 of 3).",
                "Next page: 2",
                "Previous page: 0"
            ]
        );
        let last = paginate(45, page(Some(20), Some(2)));
        assert_eq!(
            last.info,
            ["Showing 41-45 of 45 (Page 3 of 3).", "Previous page: 1"]
        );
        assert_eq!(
            last.slice(&(0..45).collect::<Vec<_>>()),
            &[40, 41, 42, 43, 44]
        );
    }

    #[test]
    fn invalid_index_falls_back_to_the_first_page() {
        let result = paginate(22, page(Some(5), Some(9)));
        assert_eq!(
            result.info,
            [
                "Invalid page number provided. Showing first page.",
                "Showing 1-5 of 22 (Page 1 of 5).",
                "Next page: 1"
            ]
        );
        assert_eq!(result.structured["invalidPage"], json!(true));
    }

    #[test]
    fn a_size_alone_gives_the_first_page_and_one_page_has_no_links() {
        let result = paginate(3, page(Some(10), None));
        assert_eq!(result.info, ["Showing 1-3 of 3 (Page 1 of 1)."]);
        assert_eq!(result.structured["totalPages"], json!(1));
    }
}
