//! Server reflection (grpc.reflection.v1 and v1alpha `ServerReflectionInfo`): what lets ghz,
//! grpcurl and `herd grpc` call `herd serve` without a .proto file. Each request gets one
//! response: the services listed, or the file declaring a symbol (with the files it imports),
//! or an error response saying what was not found.

use std::collections::HashSet;

use prost::Message;
use prost_reflect::{DynamicMessage, FileDescriptor, ReflectMessage, Value};

use super::services::{decode, Services, Status};
use super::status;

impl Services {
    /// Answers one `ServerReflectionRequest` with a `ServerReflectionResponse`.
    pub(crate) fn reflect(&self, alpha: bool, bytes: &[u8]) -> Result<Vec<u8>, Status> {
        let package = if alpha { "v1alpha" } else { "v1" };
        let name = |m: &str| format!("grpc.reflection.{package}.{m}");
        let message = |m: &str| {
            let desc = self
                .pool
                .get_message_by_name(&name(m))
                .ok_or((status::INTERNAL, format!("{} is missing", name(m))))?;
            Ok::<_, Status>(DynamicMessage::new(desc))
        };
        let request_desc = message("ServerReflectionRequest")?.descriptor();
        let request = decode(&request_desc, bytes)?;
        let mut response = message("ServerReflectionResponse")?;
        response.set_field_by_name(
            "valid_host",
            Value::String(super::services::string(&request, "host")),
        );
        response.set_field_by_name("original_request", Value::Message(request.clone()));
        let asked = |field: &str| {
            request
                .has_field_by_name(field)
                .then(|| super::services::string(&request, field))
        };
        let answer = if asked("list_services").is_some() {
            let mut list = message("ListServiceResponse")?;
            let services = self
                .pool
                .services()
                .map(|s| {
                    let mut one = message("ServiceResponse")?;
                    one.set_field_by_name("name", Value::String(s.full_name().to_string()));
                    Ok(Value::Message(one))
                })
                .collect::<Result<Vec<_>, Status>>()?;
            list.set_field_by_name("service", Value::List(services));
            Ok(("list_services_response", list))
        } else if let Some(symbol) = asked("file_containing_symbol") {
            match self.file_of_symbol(&symbol) {
                Some(file) => Ok(files(message("FileDescriptorResponse")?, file)),
                None => Err(format!("symbol '{symbol}' is not in herd serve's services")),
            }
        } else if let Some(name) = asked("file_by_filename") {
            match self.pool.get_file_by_name(&name) {
                Some(file) => Ok(files(message("FileDescriptorResponse")?, file)),
                None => Err(format!("file '{name}' is not one of herd serve's")),
            }
        } else if let Some(ty) = asked("all_extension_numbers_of_type") {
            let mut numbers = message("ExtensionNumberResponse")?;
            numbers.set_field_by_name("base_type_name", Value::String(ty));
            Ok(("all_extension_numbers_response", numbers))
        } else {
            Err("herd serve declares no extensions".to_string())
        };
        let (field, value) = match answer {
            Ok(found) => found,
            Err(not_found) => {
                let mut error = message("ErrorResponse")?;
                error.set_field_by_name("error_code", Value::I32(i32::from(status::NOT_FOUND)));
                error.set_field_by_name("error_message", Value::String(not_found));
                ("error_response", error)
            }
        };
        response.set_field_by_name(field, Value::Message(value));
        Ok(response.encode_to_vec())
    }

    fn file_of_symbol(&self, symbol: &str) -> Option<FileDescriptor> {
        let pool = &self.pool;
        let direct = pool
            .get_service_by_name(symbol)
            .map(|s| s.parent_file())
            .or_else(|| pool.get_message_by_name(symbol).map(|m| m.parent_file()))
            .or_else(|| pool.get_enum_by_name(symbol).map(|e| e.parent_file()));
        // A method or a field: `package.Service.Method`, `package.Message.field`.
        direct.or_else(|| {
            let (parent, _) = symbol.rsplit_once('.')?;
            pool.get_service_by_name(parent)
                .map(|s| s.parent_file())
                .or_else(|| pool.get_message_by_name(parent).map(|m| m.parent_file()))
        })
    }
}

/// A file response: the file, then every file it imports, each once.
fn files(mut response: DynamicMessage, file: FileDescriptor) -> (&'static str, DynamicMessage) {
    let mut seen = HashSet::new();
    let mut order = vec![file];
    let mut protos = Vec::new();
    while let Some(file) = order.pop() {
        if !seen.insert(file.name().to_string()) {
            continue;
        }
        protos.push(Value::Bytes(
            file.file_descriptor_proto().encode_to_vec().into(),
        ));
        order.extend(file.dependencies());
    }
    response.set_field_by_name("file_descriptor_proto", Value::List(protos));
    ("file_descriptor_response", response)
}
