// A table of the user's own: what the CSV reader accepts and refuses (with
// file and line), and that the split and standardisation are what they say.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "hfta/trainers/array_classifier.h"
#include "hfta/trainers/tabular_data.h"
#include "train_alone.h"

namespace hfta::trainers {
namespace {

// The message of the TableError that parsing `text` throws, and its part.
std::pair<std::string, std::string> refusal(const std::string& text, const std::string& label = "") {
  try {
    parse_table(text, "t.csv", label);
  } catch (const TableError& e) {
    return {e.part(), e.what()};
  }
  return {"", "accepted"};
}

TEST(TabularData, ReadsHeaderLabelAndNumbers) {
  const Table t = parse_table("a,b,kind\n1,2.5,x\n\n-3,+4e-1,y\r\n 5 , 6 ,x\n", "t.csv", "");
  EXPECT_EQ(t.features, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.label, "kind");
  EXPECT_EQ(t.values, (std::vector<double>{1, 2.5, -3, 0.4, 5, 6}));
  EXPECT_EQ(t.labels, (std::vector<std::string>{"x", "y", "x"}));
  EXPECT_EQ(t.lines, (std::vector<int>{2, 4, 5}));  // the blank line 3 is skipped, and counted
}

TEST(TabularData, LabelColumnByNameAnywhereAndQuotedFields) {
  const Table t = parse_table("\"class, as named\",\"x \"\"1\"\"\",y\n\"a,b\",1,2\nc,3,\"4\"\n", "t.csv",
                              "class, as named");
  EXPECT_EQ(t.features, (std::vector<std::string>{"x \"1\"", "y"}));
  EXPECT_EQ(t.labels, (std::vector<std::string>{"a,b", "c"}));
  EXPECT_EQ(t.values, (std::vector<double>{1, 2, 3, 4}));
}

TEST(TabularData, RefusesWhatIsNoTableNamingFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "t.csv: empty"},
      {"a,b\n", "t.csv: holds a header row and no data rows"},
      {"1.5,2\n3,4\n", "t.csv:1: the first row holds 1.5, 2, ...: a table starts with a header row"},
      {"5.1,3.5,setosa\n4.9,3,setosa\n", "t.csv:1: the first row holds 5.1, 3.5, ...: a table starts with a header"},
      {"a;b;c\n1;2;3\n", "t.csv:1: its fields are separated by semicolons; a CSV table's are by commas"},
      {"a\tb\tc\n1\t2\t3\n", "t.csv:1: its fields are separated by tabs"},
      {"a,b,c\n1,1e400,x\n", "holds '1e400', not a number: beyond the range of a double"},
      {"a,b,c\n1,+-3,x\n", "holds '+-3', not a number: a column of categories?"},
      {"a,b,c\n1,-inf,x\n", "holds '-inf', not a number: an infinity; every value must be finite"},
      {"a,b,c\n1,2,NA\n", "t.csv:2: the row's label (column 'c' (column 3)) is 'NA': a missing value?"},
      {"gr\xf6\xdf" "e,b\n1,x\n", "t.csv:1: byte 0xF6 is not UTF-8 (Latin-1 or Windows-1252 text, most likely)"},
      {std::string("\xff\xfe" "a\0,\0", 6), "t.csv: UTF-16 text"},
      {"a,a\n1,2\n", "t.csv:1: two columns are named 'a' (columns 1 and 2)"},
      {"a,,c\n1,2,3\n", "t.csv:1: column 2 of the header has no name"},
      {",a,c\n0,2,x\n", "t.csv:1: column 1 of the header has no name (pandas' to_csv writes its index there"},
      {"a,b,c\n1,x,p\n2,3,q\n4,,q\n5,6\n", "t.csv:2: column 'b' (column 2) holds 'x', not a number: a column of "
                                                "categories? encode it as numbers (one 0/1 column per category) before "
                                                "tuning (and 2 more rows with a problem: lines 4, 5)"},
      {"abc\n1\n", "the header names 1 column; a table needs a label column and at least one feature"},
      {"a,b,c\n1,2,3\n4,5\n", "t.csv:3: the row holds 2 fields; the header names 3 columns"},
      {"a,b,c\n1,2,x\n4,NA,y\n", "t.csv:3: column 'b' (column 2) holds 'NA', not a number: a missing value?"},
      {"a,b,c\n1,,x\n", "t.csv:2: column 'b' (column 2) holds '', not a number: a missing value?"},
      {"a,b,c\n1,red,x\n", "holds 'red', not a number: a column of categories? encode it as numbers"},
      // One stray text among numbers is no column of categories.
      {"a,b,c\n1,2,x\n1,\"1,234\",y\n3,4,x\n", "t.csv:3: column 'b' (column 2) holds '1,234', not a number: the "
                                               "column holds numbers in 2 of its 3 rows; write this one as a plain number"},
      {"a,b,c\n1,red,x\n1,blue,y\n3,4,x\n", "holds 'red', not a number: a column of categories?"},
      {"a,b,c\n1,nan,x\n", "holds 'nan', not a number: a missing value?"},
      {"a,b,c\n1,2,\n", "t.csv:2: the row has no label (column 'c' (column 3))"},
      {"a,b\n\"1,2\n", "t.csv:2: a quoted field has no closing quote"},
      {"a,b\n\"1\"x,2\n", "t.csv:2: text after a quoted field's closing quote ('x')"},
      {std::string("a,b\n1,\0", 7), "t.csv: holds NUL (zero) bytes: not a CSV text file"},
      {"a,b\r1,2\r", "classic Mac OS"},
  };
  for (const auto& [text, needle] : cases) {
    SCOPED_TRACE(text);
    const auto [part, message] = refusal(text);
    EXPECT_EQ(part, "train");
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
  const auto [part, message] = refusal("a,b,c\n1,2,3\n", "klass");
  EXPECT_EQ(part, "label");
  EXPECT_NE(message.find("t.csv:1: no column is named 'klass'; the columns: a, b, c"), std::string::npos) << message;
}

TEST(TabularData, NumbersAsColumnNamesAreAHeaderWhereTheyCanBeOnlyNames) {
  // pandas' to_csv of an unnamed frame: 0, 1, 2, ...; and years.
  EXPECT_EQ(parse_table("0,1,2,label\n1.5,2,3,x\n", "t.csv", "").features, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(parse_table("2019,2020,y\n1,2,a\n", "t.csv", "").features, (std::vector<std::string>{"2019", "2020"}));
  EXPECT_EQ(parse_table("1.5,2.5,y\n1,2,a\n", "t.csv", "y").features, (std::vector<std::string>{"1.5", "2.5"}));
  // Other integers are a row of data without its header.
  EXPECT_THROW(parse_table("4,9,1\n3,2,1\n", "t.csv", ""), TableError);
  // A trailing carriage return without its line feed ends the line.
  EXPECT_EQ(parse_table("a,b\r\n1,x\r\n2,y\r", "t.csv", "").labels, (std::vector<std::string>{"x", "y"}));
}

TEST(TabularData, ReadsFilesAndSaysWhyNot) {
  const std::string path = ::testing::TempDir() + "/tabular_read.csv";
  std::ofstream(path) << "\xEF\xBB\xBFx,y\n1,a\n2,b\n";  // Excel's byte-order mark is no part of the first name
  std::string bytes;
  const Table t = read_table(path, "shown.csv", "y", "test", &bytes);
  EXPECT_EQ(t.features, std::vector<std::string>{"x"});
  EXPECT_EQ(bytes.size(), 15u);  // the bytes as read, the mark included
  try {
    read_table(path + ".missing", "gone.csv", "", "test");
    FAIL() << "read a missing file";
  } catch (const TableError& e) {
    EXPECT_EQ(e.part(), "test");
    EXPECT_EQ(std::string(e.what()), "gone.csv: No such file or directory");
  }
  EXPECT_THROW(read_table(::testing::TempDir(), "dir", ""), TableError);
}

// n rows of one feature (its row number) and labels cycling through `k` classes.
Table counted(std::int64_t n, std::int64_t k) {
  Table t;
  t.name = "n.csv";
  t.features = {"i"};
  t.label = "c";
  for (std::int64_t i = 0; i < n; ++i) {
    t.values.push_back(static_cast<double>(i));
    t.labels.push_back("class_" + std::to_string(i % k));
    t.lines.push_back(static_cast<int>(i + 2));
  }
  return t;
}

TEST(TabularData, SplitIsStratifiedFixedAndWhole) {
  const Table t = counted(103, 3);  // classes of 35, 34 and 34 rows
  const TabularData d = make_tabular_data(t, nullptr);
  EXPECT_EQ(d.data.validation.size(), 21);  // a fifth, rounded
  EXPECT_EQ(d.data.train.size(), 82);
  EXPECT_EQ(d.data.test.size(), 0);
  EXPECT_EQ(d.data.classes, 3);
  EXPECT_EQ(d.classes, (std::vector<std::string>{"class_0", "class_1", "class_2"}));
  // Every row once, in one split; each class's share within one row of a fifth.
  auto rows = [&](const Split& s) {
    const at::Tensor x = s.images.reshape({-1}) * d.scale[0] + d.mean[0];
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < s.size(); ++i) out.push_back(std::llround(x[i].item<double>()));
    return out;
  };
  std::set<std::int64_t> all;
  std::map<std::int64_t, int> held;
  for (auto r : rows(d.data.train)) EXPECT_TRUE(all.insert(r).second);
  for (auto r : rows(d.data.validation)) {
    EXPECT_TRUE(all.insert(r).second);
    ++held[r % 3];
  }
  EXPECT_EQ(all.size(), 103u);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(held[c], 7, 1) << "class " << c;
  // Labels agree with the rows they came with.
  const auto train_rows = rows(d.data.train);
  for (std::size_t i = 0; i < train_rows.size(); ++i) {
    EXPECT_EQ(d.data.train.labels[static_cast<std::int64_t>(i)].item<std::int64_t>(), train_rows[i] % 3);
  }
  // Fixed: the same split every time, and as many rows as asked.
  EXPECT_TRUE(at::equal(make_tabular_data(t, nullptr).data.validation.images, d.data.validation.images));
  EXPECT_EQ(make_tabular_data(t, nullptr, 50).data.validation.size(), 50);
  try {
    make_tabular_data(t, nullptr, 101);
    FAIL() << "left a class no training row";
  } catch (const TableError& e) {
    EXPECT_EQ(e.part(), "validation");
    EXPECT_NE(std::string(e.what()).find("n.csv holds 103 rows of 3 classes; holding 101 out for validation leaves a "
                                         "class no row to train on (at most 100)"),
              std::string::npos)
        << e.what();
  }
  // Every class keeps a row to train on, however few it has and however
  // many rows are held out (a rare class's share rounds to none).
  for (std::int64_t held : {1, 2, 5, 10, 16}) {  // (16: all but one row of each class)
    Table rare = counted(20, 4);  // classes of 5 rows, but class_3 only once:
    for (std::int64_t i = 0; i < 20; ++i) {
      if (rare.labels[i] == "class_3" && i != 3) rare.labels[i] = "class_0";
    }
    const TabularData s = make_tabular_data(rare, nullptr, held);
    EXPECT_EQ(s.data.validation.size(), held);
    EXPECT_EQ(std::get<0>(at::_unique(s.data.train.labels)).numel(), 4) << held << " held out";
  }
}

TEST(TabularData, StandardisedByTheTrainingRowsAlone) {
  Table t;
  t.name = "s.csv";
  t.features = {"x", "constant"};
  t.label = "y";
  for (int i = 0; i < 40; ++i) {
    t.values.insert(t.values.end(), {std::pow(1.1, i) * 1000, 7.0});
    t.labels.push_back(i % 2 ? "b" : "a");
    t.lines.push_back(i + 2);
  }
  const TabularData d = make_tabular_data(t, nullptr, 8);
  const at::Tensor x = d.data.train.images.to(at::kDouble);
  EXPECT_NEAR(x.select(1, 0).mean().item<double>(), 0, 1e-6);
  EXPECT_NEAR(x.select(1, 0).std(/*unbiased=*/false).item<double>(), 1, 1e-6);
  EXPECT_EQ(d.scale[1], 1.0);  // a constant column: centred, not divided by zero
  EXPECT_TRUE(at::equal(d.data.validation.images.select(1, 1), at::zeros({8})));
  // Validation rows are scaled by the training rows' statistics, not their own.
  // Undone with the training rows' mean and scale, they are rows of the file
  // (their own statistics would give other values).
  const at::Tensor v = d.data.validation.images.to(at::kDouble).select(1, 0) * d.scale[0] + d.mean[0];
  for (std::int64_t r = 0; r < 8; ++r) {
    const double i = std::log(v[r].item<double>() / 1000) / std::log(1.1);
    EXPECT_NEAR(i, std::round(i), 1e-4) << "validation row " << r;
  }
}

TEST(TabularData, ANumberTooSmallForADoubleIsReadAsTheNearestAsPandasReadsIt) {
  const Table t = parse_table("a,y\n1e-400,p\n-1e-400,q\n1e-310,p\n", "t.csv", "");
  ASSERT_EQ(t.values.size(), 3u);
  EXPECT_EQ(t.values[0], 0.0);
  EXPECT_TRUE(std::signbit(t.values[1]) && t.values[1] == 0.0);
  EXPECT_EQ(t.values[2], std::strtod("1e-310", nullptr));  // a subnormal, kept
  EXPECT_NE(refusal("a,y\n1e400,p\n").second.find("holds '1e400', not a number: beyond the range of a double"),
            std::string::npos);
}

TEST(TabularData, ColumnsNearADoublesLimitStandardiseWithoutOverflow) {
  const Table t = parse_table("a,b,y\n1e308,1e200,p\n-1e308,-1e200,q\n1.5e308,1e200,p\n-1.5e308,-1e200,q\n"
                              "1e308,1e200,p\n-1e308,-1e200,q\n", "t.csv", "");
  const TabularData d = make_tabular_data(t, nullptr, 2);
  for (std::int64_t j = 0; j < 2; ++j) {
    EXPECT_TRUE(std::isfinite(d.mean[j]) && std::isfinite(d.scale[j]) && d.scale[j] > 0) << "column " << j;
    EXPECT_NEAR(d.data.train.images.select(1, j).to(at::kDouble).std(false).item<double>(), 1, 1e-6);
  }
}

TEST(TabularData, AValuePastFloat32OnceStandardisedIsRefusedWhereItIs) {
  // Finite as a double, but the models train in float32: it would be an
  // infinity there, and every trial "diverged" with nothing said why.
  std::string classes = "x,y\n", numbers = "x,y\n";
  for (int i = 1; i <= 20; ++i) {
    classes += std::to_string(i) + "," + (i % 2 ? "a" : "b") + "\n";
    numbers += std::to_string(i) + "," + std::to_string(i % 2 ? 3 * i : i) + "\n";
  }
  const auto message = [&](const std::string& test_text, bool regression) {
    const Table train = parse_table(regression ? numbers : classes, "t.csv", "", "train", regression);
    const Table test = parse_table(test_text, "test.csv", "", "test", regression);
    try {
      make_tabular_data(train, &test, 4, regression);
    } catch (const TableError& e) {
      return e.part() + ": " + e.what();
    }
    return std::string("accepted");
  };
  const std::string feature = message("x,y\n1,a\n1e39,b\n", false);
  EXPECT_EQ(feature.rfind("test: test.csv:3: column 'x' holds 1e+39, ", 0), 0u) << feature;
  EXPECT_NE(feature.find(" standard deviations of the training rows from their mean: past 1.8e19, the square root "
                         "of float32's range (the models train in float32, where its products would be infinite); "
                         "rescale the column (a logarithm, or other units)"),
            std::string::npos)
      << feature;
  // A regression's target too: its squared error would be past float32's range.
  const std::string target = message("x,y\n1,3\n2,1e300\n", true);
  EXPECT_EQ(target.rfind("test: test.csv:3: the target 'y' is 1e300, ", 0), 0u) << target;
  EXPECT_NE(target.find("past 1.8e19, the square root of float32's range"), std::string::npos) << target;
  // Far, but within it: accepted.
  EXPECT_EQ(message("x,y\n1e19,3\n2,1e19\n", true), "accepted");
}

TEST(TabularData, IntegerLabelsAreNumberedInNumericOrder) {
  const Table t = parse_table("x,y\n1,10\n2,9\n3,10.0\n4,-1\n5,9\n", "t.csv", "");
  const TabularData d = make_tabular_data(t, nullptr, 1);
  EXPECT_EQ(d.classes, (std::vector<std::string>{"-1", "9", "10"}));  // 10 and 10.0: one class
  EXPECT_THROW(make_tabular_data(parse_table("x,y\n1,0.5\n2,1\n", "t.csv", ""), nullptr, 1), TableError);
  const auto message = [](const Table& t, const Table* test) {
    try {
      make_tabular_data(t, test, 1);
    } catch (const TableError& e) {
      return e.part() + ": " + e.what();
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(parse_table("x,y\n1,0.5\n2,1\n", "t.csv", ""), nullptr)
                .find("train: t.csv:2: the label column 'y' holds 0.5: labels are classes"),
            std::string::npos);
  EXPECT_NE(message(parse_table("x,y\n1,a\n2,a\n", "t.csv", ""), nullptr).find("one class leaves nothing to learn"),
            std::string::npos);
  Table ids = counted(300, 300);
  EXPECT_NE(message(ids, nullptr).find("holds 300 different values in 300 rows: an id or a measurement"),
            std::string::npos);
  // A test table: the same columns, and the training table's classes.
  const Table train = parse_table("x,y\n1,10\n2,9\n3,10\n4,9\n", "t.csv", "");
  const Table good = parse_table("x,y\n1,10.0\n2,9\n", "test.csv", "");
  EXPECT_EQ(make_tabular_data(train, &good, 1).data.test.size(), 2);
  const Table unknown = parse_table("x,y\n1,10\n2,8\n", "test.csv", "");
  EXPECT_NE(message(train, &unknown).find("test: test.csv:3: label 8 is no class of the training table (its classes: 9, 10)"),
            std::string::npos);
  const Table other = parse_table("z,y\n1,10\n", "test.csv", "");
  EXPECT_NE(message(train, &other).find("test: test.csv:1: its feature 1 is 'z', the training table's 'x'"),
            std::string::npos);
  // A label beyond an integer's range is no class (not undefined behaviour).
  const Table huge = parse_table("x,y\n1,1e300\n", "test.csv", "");
  EXPECT_NE(message(train, &huge).find("label 1e300 is no class"), std::string::npos);
}

// The table's rows train an MLP array exactly as each trial alone.
void expect_mlp_on_a_table_as_alone_in_float64(const at::Device& device) {
  Table t;
  t.name = "g.csv";
  t.features = {"a", "b", "c", "d", "e"};
  t.label = "y";
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::randn({300, 5}, gen, at::kDouble);
  for (std::int64_t i = 0; i < 300; ++i) {
    for (std::int64_t j = 0; j < 5; ++j) t.values.push_back(x[i][j].item<double>() * (j + 1) + j);
    const double s = x[i][0].item<double>() + x[i][1].item<double>() * x[i][2].item<double>();
    t.labels.push_back(s < -0.5 ? "low" : s < 0.5 ? "mid" : "high");
    t.lines.push_back(static_cast<int>(i + 2));
  }
  const TabularData d = make_tabular_data(t, nullptr);
  std::vector<SlotTrial> trials = {{0, 11, 0.05, 0.9}, {1, 12, 0.1, 0.0, 1e-3}, {2, 13, 0.02, 0.5}};
  ArrayTrainerOptions o;
  o.batch_size = 16;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  expect_same_as_alone(std::make_shared<FusedMlp>(3, 5, 2, 24, "gelu", 0.0, d.data.classes, f64), trials, o, 60,
                       on(device, d.data));
}

TEST(TabularData, MlpArrayOnATableEqualsEachTrialTrainedAloneInFloat64) {
  expect_mlp_on_a_table_as_alone_in_float64(at::kCPU);
}

TEST(TabularData, MlpArrayOnATableEqualsEachTrialTrainedAloneInFloat64OnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_mlp_on_a_table_as_alone_in_float64(at::kCUDA);
}

// A table whose label is a measurement: y = 3a - 2bc + 100 plus noise, in
// the file's own units (a mean of 100, a spread of about 4).
Table measured(std::int64_t rows) {
  Table t;
  t.name = "m.csv";
  t.features = {"a", "b", "c"};
  t.label = "y";
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  const at::Tensor x = at::randn({rows, 4}, gen, at::kDouble);
  for (std::int64_t i = 0; i < rows; ++i) {
    const double a = x[i][0].item<double>(), b = x[i][1].item<double>(), c = x[i][2].item<double>();
    t.values.insert(t.values.end(), {a * 10, b, c + 5});
    std::ostringstream y;
    y.precision(17);
    y << 3 * a - 2 * b * c + 100 + 0.1 * x[i][3].item<double>();
    t.labels.push_back(y.str());
    t.lines.push_back(static_cast<int>(i + 2));
  }
  return t;
}

TEST(TabularData, ARegressionsTargetIsANumberStandardisedByTheTrainingRows) {
  const Table t = measured(50);
  const TabularData d = make_tabular_data(t, nullptr, 0, /*regression=*/true);
  EXPECT_TRUE(d.regression);
  EXPECT_TRUE(d.classes.empty());
  EXPECT_EQ(d.data.classes, 1);  // one output
  EXPECT_EQ(d.data.target_scale, d.target_scale);
  EXPECT_EQ(d.data.train.labels.scalar_type(), at::kFloat);
  EXPECT_EQ(d.data.validation.size(), 10);  // a fifth
  EXPECT_EQ(d.data.train.size(), 40);
  const at::Tensor y = d.data.train.labels.to(at::kDouble);
  EXPECT_NEAR(y.mean().item<double>(), 0, 1e-6);
  EXPECT_NEAR(y.std(/*unbiased=*/false).item<double>(), 1, 1e-6);
  EXPECT_NEAR(d.target_mean, 100, 5);
  // Undone by the training rows' mean and scale, every row's target is the file's.
  std::multiset<double> file;
  for (const auto& l : t.labels) file.insert(std::stod(l));
  for (const Split* split : {&d.data.train, &d.data.validation}) {
    for (std::int64_t r = 0; r < split->size(); ++r) {
      const double v = split->labels[r].item<double>() * d.target_scale + d.target_mean;
      const auto near = file.lower_bound(v - 1e-4);
      ASSERT_TRUE(near != file.end() && std::fabs(*near - v) < 1e-4) << v;
      file.erase(near);  // each row once
    }
  }
  EXPECT_TRUE(file.empty());
  // The same rows held out every time (a fixed seed), and the test table's
  // targets standardised by the training rows'.
  const TabularData again = make_tabular_data(t, nullptr, 0, true);
  EXPECT_TRUE(at::equal(again.data.validation.labels, d.data.validation.labels));
  Table test = measured(7);
  test.name = "test.csv";
  const TabularData with_test = make_tabular_data(t, &test, 0, true);
  for (std::int64_t r = 0; r < 7; ++r) {
    EXPECT_NEAR(with_test.data.test.labels[r].item<double>() * d.target_scale + d.target_mean, std::stod(test.labels[r]),
                1e-4);
  }
}

TEST(TabularData, ARegressionRefusesWhatItCannotLearnSayingWhy) {
  const auto message = [](const Table& t, const Table* test, std::int64_t validation, bool regression) {
    try {
      make_tabular_data(t, test, validation, regression);
    } catch (const TableError& e) {
      return e.part() + ": " + e.what();
    }
    return std::string("accepted");
  };
  const Table t = measured(50);
  // As classes, a measurement is refused with the way to predict it.
  EXPECT_NE(message(t, nullptr, 0, false).find("train: m.csv:2: the label column 'y' holds " + t.labels[0] +
                                               ": labels are classes, and a number with a fraction is a measurement; "
                                               "to predict it, set task.loss: mse (regression)"),
            std::string::npos)
      << message(t, nullptr, 0, false);
  Table words = parse_table("x,y\n1,2.5\n2,3\n3,high\n4,1\n", "w.csv", "");
  EXPECT_EQ(message(words, nullptr, 1, true),
            "train: w.csv:4: the target column 'y' holds high: a regression (task.loss mse, l1 or huber) learns a "
            "number in every row; to classify, leave task.loss out");
  Table test = parse_table("x,y\n1,2.5\n2,high\n", "test.csv", "");
  Table numbers = parse_table("x,y\n1,2.5\n2,3\n3,4\n4,1\n", "n.csv", "");
  EXPECT_EQ(message(numbers, &test, 1, true),
            "test: test.csv:3: the target column 'y' holds high: a regression (task.loss mse, l1 or huber) learns a "
            "number in every row; to classify, leave task.loss out");
  EXPECT_EQ(message(numbers, nullptr, 3, true),
            "validation: n.csv holds 4 rows; holding 3 out for validation leaves fewer than 2 to train on (at most 2)");
  // Read as a regression's, a table says every row whose target is no number,
  // with its other problems, in file order.
  try {
    parse_table("x,y\n1,abc\n2,NA\nq,3\n4,5\n5,xyz\n", "r.csv", "", "train", /*numeric_label=*/true);
    ADD_FAILURE() << "accepted";
  } catch (const TableError& e) {
    EXPECT_EQ(std::string(e.what()),
              "r.csv:2: the target column 'y' holds abc: a regression (task.loss mse, l1 or huber) learns a number in "
              "every row; to classify, leave task.loss out (and 3 more rows with a problem: lines 3, 4, 6)");
  }
  // A target beyond a double, or infinite, is said as such.
  for (const auto& [value, why] : std::vector<std::pair<std::string, std::string>>{
           {"1e999", "holds 1e999: beyond the range of a double"}, {"-inf", "holds -inf: an infinity"}}) {
    try {
      parse_table("x,y\n1,2\n2," + value + "\n", "r.csv", "", "train", true);
      ADD_FAILURE() << value << " accepted";
    } catch (const TableError& e) {
      EXPECT_NE(std::string(e.what()).find("r.csv:3: the target column 'y' " + why), std::string::npos) << e.what();
    }
  }
  // The training table's own problems are said before a test table's header.
  const Table header = parse_table("z,y\n1,2\n", "test.csv", "");
  EXPECT_NE(message(parse_table("x,y\n1,0.5\n2,1\n", "t.csv", ""), &header, 1, false).find("train: t.csv:2"),
            std::string::npos);
  // Integer labels of many classes fail as classes saying how to predict the number.
  std::string many = "x,y\n";
  for (int i = 0; i < 60; ++i) many += std::to_string(i) + "," + std::to_string(100 + i % 30) + "\n";
  const Table unknown = parse_table("x,y\n1,99\n", "test.csv", "");
  EXPECT_NE(message(parse_table(many, "many.csv", ""), &unknown, 1, false)
                .find("label 99 is no class of the training table (its classes: 100, 101, 102, 103, 104, 105, 106, "
                      "107, 108, 109, 110, 111, ...); 'y' holds 30 different integers: if they are a measurement, set "
                      "task.loss: mse to predict the number"),
            std::string::npos);
  EXPECT_TRUE(make_tabular_data(parse_table(many, "many.csv", ""), nullptr, 1).integer_classes);
  Table constant = parse_table("x,y\n1,7\n2,7\n3,7.0\n4,7\n", "c.csv", "");
  EXPECT_EQ(message(constant, nullptr, 1, true),
            "train: c.csv: every training row's target ('y') is 7: a constant leaves nothing to learn");
}

// A regression's MLP array trains each trial as PyTorch's MSELoss, L1Loss or
// HuberLoss trains it alone, and measures what the extracted models measure.
void expect_regression_as_alone_in_float64(const at::Device& device) {
  const TabularData d = make_tabular_data(measured(240), nullptr, 0, true);
  std::vector<SlotTrial> trials = {{0, 21, 0.05, 0.9}, {1, 22, 0.1, 0.0, 1e-3}, {2, 23, 0.02, 0.5}};
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(device);
  for (const char* loss : {"mse", "l1", "huber"}) {
    SCOPED_TRACE(loss);
    ArrayTrainerOptions o;
    o.batch_size = 16;
    o.loss = loss;
    expect_same_as_alone(std::make_shared<FusedMlp>(3, 3, 2, 16, "tanh", 0.0, 1, f64), trials, o, 40,
                         on(device, d.data));
  }
}

TEST(TabularData, RegressionArrayEqualsEachTrialTrainedAloneInFloat64) {
  expect_regression_as_alone_in_float64(at::kCPU);
}

TEST(TabularData, RegressionArrayEqualsEachTrialTrainedAloneInFloat64OnTheGpu) {
  HFTA_SKIP_WITHOUT_GPU();
  expect_regression_as_alone_in_float64(at::kCUDA);
}

TEST(TabularData, ARegressionLossUnderAutocastIsFloat32sWithTheTargetUnrounded) {
  // bfloat16 outputs, as autocast gives them; targets bfloat16 cannot hold
  // (1 + 2^-12): each model's loss is float32's of the widened outputs.
  const at::Tensor outputs = at::randn({2, 64, 1}).to(at::kBFloat16);
  const at::Tensor targets = at::full({64}, 1 + std::ldexp(1.0, -12), at::kFloat) + at::arange(64, at::kFloat);
  fusion::AutocastScope autocast(fusion::Precision::kBFloat16, at::kCPU);
  for (const char* loss : {"mse", "l1", "huber"}) {
    SCOPED_TRACE(loss);
    const at::Tensor got = per_model_regression_loss(outputs, targets, loss);
    EXPECT_EQ(got.scalar_type(), at::kFloat);
    for (std::int64_t b = 0; b < 2; ++b) {
      const at::Tensor e = (outputs[b].to(at::kDouble).view({-1}) - targets.to(at::kDouble));
      const double want = loss == std::string("mse") ? e.pow(2).mean().item<double>()
                          : loss == std::string("l1") ? e.abs().mean().item<double>()
                          : at::where(e.abs() < 1, 0.5 * e.pow(2), e.abs() - 0.5).mean().item<double>();
      EXPECT_NEAR(got[b].item<double>(), want, 1e-6 * want) << "model " << b;
    }
  }
}

TEST(TabularData, RegressionMetricsAreEachModelsErrorsInTheTargetsUnits) {
  const TabularData d = make_tabular_data(measured(200), nullptr, 0, true);
  ArrayTrainerOptions o;
  o.batch_size = 16;
  o.loss = "huber";
  o.metric = "val_rmse";
  o.maximize = false;
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  auto model = std::make_shared<FusedMlp>(2, 3, 1, 8, "relu", 0.0, 1, f64);
  ArrayTrainer trainer(model, {{0, 31, 0.05}, {1, 32, 0.001}}, o, d.data);
  trainer.train(30);
  const auto metrics = trainer.evaluate();
  ASSERT_EQ(metrics.size(), 2u);
  // Independently: each extracted model on the validation rows, in the file's units.
  const at::Tensor y = d.data.validation.labels.to(at::kDouble) * d.target_scale + d.target_mean;
  for (std::int64_t b = 0; b < 2; ++b) {
    SCOPED_TRACE("model " + std::to_string(b));
    torch::nn::Sequential plain = model->extract_slot(b);
    plain->eval();
    const at::Tensor predicted =
        plain->forward(d.data.validation.images.to(at::kDouble)).view({-1}) * d.target_scale + d.target_mean;
    const at::Tensor error = predicted - y;
    const SlotMetrics& m = metrics[b];
    EXPECT_NEAR(m.val_rmse, error.pow(2).mean().sqrt().item<double>(), 1e-9 * d.target_scale);
    EXPECT_NEAR(m.val_mae, error.abs().mean().item<double>(), 1e-9 * d.target_scale);
    EXPECT_NEAR(m.val_r2, 1 - error.pow(2).sum().item<double>() / (y - y.mean()).pow(2).sum().item<double>(), 1e-9);
    EXPECT_NEAR(m.val_loss,
                plain_regression_loss("huber", ((predicted - d.target_mean) / d.target_scale).view({-1, 1}),
                                      (y - d.target_mean) / d.target_scale)
                    .item<double>(),
                1e-9);
    EXPECT_TRUE(std::isnan(m.val_accuracy));
  }
  // The faster learner is ahead, and ahead of predicting the mean (R2 > 0);
  // the slow one is not yet.
  EXPECT_LT(metrics[0].val_rmse, metrics[1].val_rmse);
  EXPECT_GT(metrics[0].val_r2, 0);
  EXPECT_LT(metrics[1].val_r2, metrics[0].val_r2);
  // A loss that is not a regression's is refused, and the other way round.
  o.loss = "cross_entropy";
  EXPECT_THROW(ArrayTrainer(model->resized(1), {{0, 1}}, o, d.data), std::invalid_argument);
  const TabularData classes = make_tabular_data(counted(40, 2), nullptr, 8);
  o.loss = "mse";
  EXPECT_THROW(ArrayTrainer(std::make_shared<FusedMlp>(1, 1, 1, 8, "relu", 0.0, 2, f64), {{0, 1}}, o, classes.data),
               std::invalid_argument);
}

}  // namespace
}  // namespace hfta::trainers
