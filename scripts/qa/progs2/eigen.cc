// QA driver (scripts/qa/build-progs2.sh): Eigen dense and sparse algebra, template-heavy.
// Runs until BUDGET seconds of CPU are used; mutual recursion (det_even/det_odd) makes a cycle.
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/Eigenvalues>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

static double cpu() { return double(std::clock()) / CLOCKS_PER_SEC; }

template <typename M> double det_odd(const M &m, int depth);
template <typename M> double det_even(const M &m, int depth) {
  if (m.rows() <= 2 || depth > 6) return m.determinant();
  M sub = m.block(1, 1, m.rows() - 1, m.cols() - 1);
  return m(0, 0) * det_odd(sub, depth + 1) - 0.5 * det_odd(sub, depth + 2);
}
template <typename M> double det_odd(const M &m, int depth) {
  if (m.rows() <= 2 || depth > 6) return m.trace();
  M sub = m.block(0, 0, m.rows() - 1, m.cols() - 1);
  return det_even(sub, depth + 1) + m(m.rows() - 1, m.cols() - 1);
}

template <int N> double fixed_work(int reps) {
  Eigen::Matrix<double, N, N> a = Eigen::Matrix<double, N, N>::Random();
  a = a * a.transpose() + Eigen::Matrix<double, N, N>::Identity() * N;
  double acc = 0;
  for (int i = 0; i < reps; ++i) {
    Eigen::LLT<Eigen::Matrix<double, N, N>> llt(a);
    Eigen::Matrix<double, N, 1> b = Eigen::Matrix<double, N, 1>::Constant(i);
    acc += llt.solve(b).sum();
    a(0, 0) += 1e-6;
  }
  return acc;
}

static double dynamic_work(int n) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Random(n, n);
  Eigen::MatrixXd s = a * a.transpose();
  Eigen::PartialPivLU<Eigen::MatrixXd> lu(a);
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(s);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  double r = lu.solve(b).norm() + qr.solve(b).norm() + svd.singularValues().sum() +
             es.eigenvalues().sum();
  r += det_even(Eigen::MatrixXd(a.topLeftCorner(std::min(n, 9), std::min(n, 9))), 0);
  return r;
}

static double sparse_work(int n) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, 4.0);
    if (i + 1 < n) { t.emplace_back(i, i + 1, -1.0); t.emplace_back(i + 1, i, -1.0); }
    if (i + 7 < n) { t.emplace_back(i, i + 7, -0.5); t.emplace_back(i + 7, i, -0.5); }
  }
  Eigen::SparseMatrix<double> m(n, n);
  m.setFromTriplets(t.begin(), t.end());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(m);
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, 0, 1);
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double>> cg(m);
  return ldlt.solve(b).sum() + cg.solve(b).sum();
}

int main(int argc, char **argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 1.5;
  double acc = 0;
  int round = 0;
  while (cpu() < budget) {
    acc += dynamic_work(20 + round % 30);
    acc += sparse_work(200 + 10 * (round % 20));
    acc += fixed_work<3>(200) + fixed_work<4>(100) + fixed_work<8>(20);
    ++round;
  }
  std::printf("%d rounds %.3f\n", round, acc);
  return 0;
}
