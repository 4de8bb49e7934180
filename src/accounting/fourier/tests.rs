//! Tests of the Fourier accountant against fourier-accountant 0.12.11 reference values.
use super::*;

#[test]
fn probe_values() {
    let s = FourierAccountant::new(FourierRelation::SubstituteWithoutReplacement);
    let r = FourierAccountant::new(FourierRelation::AddRemovePoisson);
    let sig = 0.7_f64.sqrt();
    let t = std::time::Instant::now();
    let ps = s.pld(sig, 0.01).unwrap();
    eprintln!("pld S {:?} {:?}", t.elapsed(), ps);
    let t = std::time::Instant::now();
    let d = ps.delta(4.0, 828).unwrap();
    eprintln!("S 828 {d:e} diff {:e} {:?}", d - 9.99024953599909e-07, t.elapsed());
    let t = std::time::Instant::now();
    let d = ps.delta(4.0, 829).unwrap();
    eprintln!("S 829 {d:e} diff {:e} {:?}", d - 1.0099949300673515e-06, t.elapsed());
    let pr = r.pld(sig, 0.01).unwrap();
    eprintln!("{:?}", pr);
    let d = pr.delta(4.0, 828).unwrap();
    eprintln!("R 828 {d:e} diff {:e}", d - 1.0894205668341514e-08);
    let t = std::time::Instant::now();
    let k = ps.max_steps(4.0, 1e-6).unwrap();
    eprintln!("maxsteps {k} {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let e = s.epsilon(1e-6, &[SubsampledGaussian::new(sig, 0.01, 828).unwrap()]).unwrap();
    eprintln!("eps {e} diff {:e} {:?}", e - 3.999790083736944, t.elapsed());
}
