use serde_json::json;

use super::*;
