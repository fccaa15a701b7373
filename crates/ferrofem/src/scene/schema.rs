//! The scene format as a JSON Schema (draft 2020-12), generated from the
//! serde types that parse it ([`SceneFile`]): each key's doc comment (with
//! its unit) is its description, a `#[serde(default)]` key carries its
//! default, an enum lists its allowed values. Editors that read JSON
//! Schema (Even Better TOML / taplo, through a `#:schema` comment) complete
//! and check scene files from it; `docs/scene.schema.json` is its copy.

use schemars::generate::SchemaSettings;

use super::SceneFile;

/// The JSON Schema of a scene file (`ferrofem schema` prints it).
pub fn schema() -> serde_json::Value {
    let generator = SchemaSettings::draft2020_12().for_deserialize().into_generator();
    let schema = generator.into_root_schema_for::<SceneFile>();
    let mut value = serde_json::to_value(&schema).expect("a schema is JSON");
    for (def, name, alias) in ALIASES {
        accept_alias(&mut value, def, name, alias);
    }
    if let Some(root) = value.as_object_mut() {
        root.insert("title".into(), "ferrofem scene file".into());
        root.insert(
            "description".into(),
            "A ferrofem scene (TOML): simulation settings, deformable bodies, obstacles, contact and \
             solvers. Documented in docs/scene-format.md."
                .into(),
        );
    }
    value
}

/// The spellings serde also accepts (`#[serde(alias)]`), which schemars
/// leaves out: (definition, name, alias). A test parses each alias.
const ALIASES: [(&str, &str, &str); 4] = [
    ("IntegratorKind", "implicit_euler", "implicit-euler"),
    ("IntegratorKind", "local_global", "local-global"),
    ("InitialGuess", "previous_velocity", "previous-velocity"),
    ("Ordering", "nested-dissection", "nested_dissection"),
];

/// Lets definition `def`'s choice `name` be spelled `alias` too.
fn accept_alias(schema: &mut serde_json::Value, def: &str, name: &str, alias: &str) {
    let choices = schema["$defs"][def]["oneOf"].as_array_mut();
    let choice = choices.into_iter().flatten().find(|c| c["const"] == name);
    if let Some(c) = choice.and_then(|c| c.as_object_mut()) {
        c.remove("const");
        c.insert("enum".into(), serde_json::json!([name, alias]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrator::InitialGuess;
    use crate::scene::IntegratorKind;
    use ferrofem_linalg::Ordering;
    use serde::de::DeserializeOwned;

    /// `alias` and `name` parse to the same value of `T`.
    fn same<T: DeserializeOwned + PartialEq + std::fmt::Debug>(name: &str, alias: &str) {
        let parse = |s: &str| serde_json::from_value::<T>(serde_json::json!(s)).unwrap();
        assert_eq!(parse(name), parse(alias), "{alias} is an alias of {name}");
    }

    #[test]
    fn every_alias_listed_is_one_and_is_in_the_schema() {
        for (def, name, alias) in ALIASES {
            match def {
                "IntegratorKind" => same::<IntegratorKind>(name, alias),
                "InitialGuess" => same::<InitialGuess>(name, alias),
                "Ordering" => same::<Ordering>(name, alias),
                other => panic!("no test for {other}"),
            }
            let text = schema()["$defs"][def].to_string();
            assert!(text.contains(&format!("\"{alias}\"")), "{def}: {alias}");
        }
    }
}
