// SPDX-License-Identifier: Apache-2.0 OR MIT
// Test stand-in for the `sppark` crate (no crates registry here): only what supraseal-c2's public
// API uses of it, `sppark::Error` — a repr(C) { code: i32, message } the C side allocates and
// the Rust side frees on drop, printed as its message. tests/supraseal/rust.cmake builds
// contrib/supraseal-c2/src/lib.rs against it.
use std::ffi::CStr;
use std::os::raw::c_char;
use std::ptr::NonNull;

#[repr(C)]
pub struct Error {
    pub code: i32,
    message: Option<NonNull<c_char>>,
}

extern "C" {
    fn free(p: *mut std::ffi::c_void);
}

impl Drop for Error {
    fn drop(&mut self) {
        if let Some(p) = self.message.take() {
            unsafe { free(p.as_ptr().cast()) };
        }
    }
}

impl From<&Error> for String {
    fn from(e: &Error) -> Self {
        match e.message {
            Some(p) => unsafe { CStr::from_ptr(p.as_ptr()) }.to_string_lossy().into_owned(),
            None => format!("error code {}", e.code),
        }
    }
}

impl From<Error> for String {
    fn from(e: Error) -> Self {
        String::from(&e)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&String::from(self))
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Error {{ code: {}, message: {:?} }}", self.code, String::from(self))
    }
}
