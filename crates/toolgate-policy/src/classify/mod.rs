//! Risk classification (being built).
